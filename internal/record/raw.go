package record

// RawExchange is a request as sent and its response as received, kept for
// --export-level raw (profile_export_raw.jsonl, AIPerf's RawRecordInfo).
type RawExchange struct {
	// Payload is the request body as sent.
	Payload []byte
	// Status is the HTTP status of the (last) response; 0 without one.
	Status int
	// Responses are the response's parts as they arrived: one per
	// server-sent event of a stream, or the whole body.
	Responses []RawResponse
}

// RawResponse is one part of a response, at its arrival on the perf clock.
type RawResponse struct {
	Perf int64
	// Event and Data are a server-sent event's fields (Event "" for a
	// plain data event).
	Event, Data string
	// Body, for a response read whole, is its text, with its content type.
	Body        string
	ContentType string
	Whole       bool
}
