package config

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strings"
)

const redacted = "<redacted>"

// Redacted returns a copy of p that is safe to write: the API key and the
// values of credential headers are replaced. URLs carry no credentials
// (Finish moves them out), so they are written as they are.
func (p Profile) Redacted() Profile {
	if p.Endpoint.APIKey != "" {
		p.Endpoint.APIKey = redacted
	}
	hs := make([]string, len(p.Endpoint.Headers))
	for i, h := range p.Endpoint.Headers {
		hs[i] = redactHeader(h)
	}
	p.Endpoint.Headers = hs
	xs := make([]string, len(p.Endpoint.ExtraInputs))
	for i, x := range p.Endpoint.ExtraInputs {
		xs[i] = redactExtra(x)
	}
	p.Endpoint.ExtraInputs = xs
	p.Endpoint.ModelNames = append([]string(nil), p.Endpoint.ModelNames...)
	p.Endpoint.URLs = append([]string(nil), p.Endpoint.URLs...)
	p.Endpoint.Users = nil
	p.ServerMetrics.Users = nil
	p.GPUTelemetry.Users = nil
	return p
}

// secretHeader reports whether a header's value is a credential:
// Authorization, Proxy-Authorization, Cookie, X-Api-Key and any header
// whose name speaks of a key, token, secret, password, auth or cookie.
func secretHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, word := range []string{"auth", "cookie", "key", "token", "secret", "password", "passwd", "credential", "session"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return false
}

// secretField reports whether an --extra-inputs field holds a credential:
// a name with password, secret, credential or auth in it, or one ending
// in key or token (api_key, apikey, access_token) — not max_tokens or
// stop_token_ids, which count tokens.
func secretField(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, word := range []string{"password", "passwd", "secret", "credential", "auth"} {
		if strings.Contains(n, word) {
			return true
		}
	}
	return strings.HasSuffix(n, "key") || strings.HasSuffix(n, "token")
}

// redactExtra hides the value of a secret --extra-inputs field, given as
// name:value or as a JSON object (its top-level fields).
func redactExtra(x string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(x), &obj); err == nil && obj != nil {
		changed := false
		for k := range obj {
			if secretField(k) {
				obj[k], changed = json.RawMessage(`"`+redacted+`"`), true
			}
		}
		if !changed {
			return x
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // "<redacted>", not "\u003credacted\u003e"
		if err := enc.Encode(obj); err != nil {
			return redacted
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	if name, _, ok := strings.Cut(x, ":"); ok && secretField(name) {
		return name + ":" + redacted
	}
	return x
}

// extraSecrets are the values of secret --extra-inputs fields, as given
// and as they appear in a request body.
func extraSecrets(x string) []string {
	var out []string
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(x), &obj); err == nil && obj != nil {
		for k, v := range obj {
			if secretField(k) {
				var str string
				if json.Unmarshal(v, &str) == nil {
					out = append(out, str)
				} else {
					out = append(out, string(v))
				}
			}
		}
		return out
	}
	if name, val, ok := strings.Cut(x, ":"); ok && secretField(name) {
		out = append(out, strings.Trim(strings.TrimSpace(val), `"`))
	}
	return out
}

// AuthWarnings say where one source of credentials overrides another: one
// Authorization header is sent, taken from -H Authorization, else
// --api-key, else the user:pw@ of a --url (as Basic auth).
func (e Endpoint) AuthWarnings() []string {
	header := false
	for _, h := range e.Headers {
		if name, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(name), "Authorization") {
			header = true
		}
	}
	urlCreds := false
	for _, u := range e.Users {
		urlCreds = urlCreds || u != nil
	}
	var out []string
	if header && e.APIKey != "" {
		out = append(out, "-H Authorization and --api-key both set the Authorization header: the -H one is sent, --api-key is not.")
	}
	if urlCreds && (header || e.APIKey != "") {
		by := "--api-key"
		if header {
			by = "-H Authorization"
		}
		out = append(out, "the user:password in --url is not sent as Basic auth: "+by+" sets the Authorization header instead.")
	}
	return out
}

func redactHeader(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if ok && secretHeader(name) {
		return name + ":" + redacted
	}
	return h
}

// redactURL hides the password of a URL-looking string; other strings are
// returned as they are.
func redactURL(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	raw := s
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Unparsable: hide everything between the scheme and the '@'.
		at := strings.LastIndex(s, "@")
		start := strings.Index(s, "://") + len("://")
		if start < len("://") || start > at {
			start = 0
		}
		return s[:start] + redacted + s[at:]
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	out := u.Redacted()
	if !strings.Contains(s, "://") {
		out = strings.TrimPrefix(out, "http://")
	}
	return out
}

// RedactArgs returns a copy of a command line's arguments with secrets
// redacted: the value of --api-key, credential headers given to -H or
// --header (with one or two dashes, as a separate argument or after '='),
// and the password of any URL.
func RedactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		arg := out[i]
		if !strings.HasPrefix(arg, "-") {
			out[i] = redactURL(arg)
			continue
		}
		name, val, hasEq := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		dashes := arg[:len(arg)-len(strings.TrimLeft(arg, "-"))]
		var redact func(string) string
		switch name {
		case "api-key":
			redact = func(string) string { return redacted }
		case "H", "header":
			redact = redactHeader
		case "extra-inputs":
			redact = redactExtra
		default:
			if hasEq {
				out[i] = dashes + name + "=" + redactURL(val)
			}
			continue
		}
		switch {
		case hasEq:
			out[i] = dashes + name + "=" + redact(val)
		case name == "extra-inputs":
			// Several values may follow (--extra-inputs a:1 api_key:…).
			for i+1 < len(out) && !strings.HasPrefix(out[i+1], "-") {
				out[i+1] = redact(out[i+1])
				i++
			}
		case i+1 < len(out):
			out[i+1] = redact(out[i+1])
			i++
		}
	}
	return out
}

// Redactor removes a run's secrets from free text (log lines, error
// messages a server echoed back, the console) by their values, whatever
// path they took.
type Redactor struct {
	secrets []string
}

// minSecretLen is the shortest secret replaced in free text; a shorter one
// would blank out ordinary letters. Structured redaction covers it anyway.
const minSecretLen = 4

// NewRedactor collects p's secret values: the API key, the values of
// credential headers (and their last word, the token of "Bearer <token>"),
// URL passwords as typed and as encoded, and the Basic auth they become.
func NewRedactor(p Profile) *Redactor {
	var s []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecretLen {
			s = append(s, v)
		}
	}
	add(p.Endpoint.APIKey)
	for _, h := range p.Endpoint.Headers {
		name, val, ok := strings.Cut(h, ":")
		if !ok || !secretHeader(name) {
			continue
		}
		add(val)
		if f := strings.Fields(val); len(f) > 1 {
			add(f[len(f)-1])
		}
	}
	for _, x := range p.Endpoint.ExtraInputs {
		for _, v := range extraSecrets(x) {
			add(v)
		}
	}
	users := slices.Clone(p.Endpoint.Users)
	for _, u := range p.ServerMetrics.Users {
		users = append(users, u)
	}
	for _, u := range p.GPUTelemetry.Users {
		users = append(users, u)
	}
	for _, u := range users {
		if u == nil {
			continue
		}
		if pw, ok := u.Password(); ok {
			add(pw)
			add(url.QueryEscape(pw))
			add(url.PathEscape(pw))
			add(base64.StdEncoding.EncodeToString([]byte(u.Username() + ":" + pw)))
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return &Redactor{secrets: slices.Compact(s)}
}

// Redact returns text with every secret replaced by <redacted>.
func (r *Redactor) Redact(text string) string {
	if r == nil {
		return text
	}
	for _, s := range r.secrets {
		if strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, redacted)
		}
	}
	return text
}

// RedactBytes is Redact for a file's bytes: b itself, not a copy, when it
// holds no secret (an inputs.json of images is hundreds of MB).
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil {
		return b
	}
	for _, s := range r.secrets {
		if bytes.Contains(b, []byte(s)) {
			return []byte(r.Redact(string(b)))
		}
	}
	return b
}

// Writer wraps w so that everything written through it is redacted. Each
// Write is redacted on its own: callers write whole lines.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r == nil || len(r.secrets) == 0 {
		return w
	}
	return redactingWriter{w: w, r: r}
}

type redactingWriter struct {
	w io.Writer
	r *Redactor
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	clean := rw.r.Redact(string(p))
	if _, err := io.WriteString(rw.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Credentials are the user:password parts of URLs, index for index with
// the URLs they came with. They are sent, never written: encoded (as a
// shard records its configuration for the merge) they are empty.
type Credentials []*url.Userinfo

// GobEncode writes nothing of the credentials.
func (Credentials) GobEncode() ([]byte, error) { return []byte{}, nil }

// GobDecode reads none back.
func (*Credentials) GobDecode([]byte) error { return nil }

// CredentialsByURL are credentials by metrics URL, never written, as
// Credentials.
type CredentialsByURL map[string]*url.Userinfo

// GobEncode writes nothing of the credentials.
func (CredentialsByURL) GobEncode() ([]byte, error) { return []byte{}, nil }

// GobDecode reads none back.
func (*CredentialsByURL) GobDecode([]byte) error { return nil }

// EnvAPIKey is the environment variable --api-key is read from when the
// flag is not given.
const EnvAPIKey = "LLMBENCH_API_KEY"
