package client

import "context"

type firstTokenKey struct{}

// WithFirstToken returns a context whose streaming requests call fn once,
// when the first chunk with content arrives (the instant their time to
// first token ends), as net/http/httptrace hooks ride on a context. A
// request that ends without content, or a response that is not streamed,
// never calls it: its caller frees what fn would have freed itself.
func WithFirstToken(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, firstTokenKey{}, fn)
}

// firstTokenHook is the request's WithFirstToken function, nil without one.
func firstTokenHook(ctx context.Context) func() {
	fn, _ := ctx.Value(firstTokenKey{}).(func())
	return fn
}
