// Command timingref measures a client's timing error against the truth: an
// instrumented streaming server notes when it wrote each chunk, a client
// notes when each arrived, and the difference is the client's error (its
// own delays plus the kernel's, which every client pays alike).
//
//	timingref serve   [-addr 127.0.0.1:18950] [-tokens 32] [-ttft 20ms] [-itl 5ms]
//	timingref client  [-url …] [-concurrency 64] [-requests 1000] [-out reference.csv]
//	timingref compare -server writes.csv -client reference.csv|profile_export.jsonl
//
// The client is the bare reference: Go's net/http, no parsing beyond
// finding "data:" lines. llmbench's arrivals come from its
// profile_export.jsonl (request_start_ns, time_to_first_token,
// inter_chunk_latency). bench/timing_reference.sh runs both side by side.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: timingref serve|client|compare [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "client":
		err = client(os.Args[2:])
	case "compare":
		err = compare(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "timingref:", err)
		os.Exit(1)
	}
}
