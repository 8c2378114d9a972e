package config

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestSecretExtraInputs: which --extra-inputs fields hold credentials, and
// how each form is written with its value hidden.
func TestSecretExtraInputs(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "apikey": true, "x-api-key": true, "access_token": true, "hf_token": true, "password": true,
		"client_secret": true, "authorization": true,
		"max_tokens": false, "min_tokens": false, "stop_token_ids": false, "temperature": false, "ignore_eos": false, "top_k": false,
	} {
		if secretField(name) != want {
			t.Errorf("secretField(%q) = %v, want %v", name, !want, want)
		}
	}
	for in, want := range map[string]string{
		"api_key:sk-1234":                       "api_key:<redacted>",
		"max_tokens:4096":                       "max_tokens:4096",
		`{"top_k":5,"access_token":"t-9876"}`:   `{"access_token":"<redacted>","top_k":5}`,
		`{"top_k":5}`:                           `{"top_k":5}`,
		`{"auth":{"user":"u","pass":"p-1234"}}`: `{"auth":"<redacted>"}`,
	} {
		if got := redactExtra(in); got != want {
			t.Errorf("redactExtra(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestAuthWarnings: one line each time a credential source is overridden.
func TestAuthWarnings(t *testing.T) {
	user := []*url.Userinfo{url.UserPassword("u", "p")}
	for _, tc := range []struct {
		e    Endpoint
		want []string
	}{
		{Endpoint{APIKey: "k"}, nil},
		{Endpoint{APIKey: "k", Headers: []string{"X-A: 1"}}, nil},
		{Endpoint{APIKey: "k", Headers: []string{"authorization: Bearer h"}}, []string{"-H Authorization and --api-key"}},
		{Endpoint{APIKey: "k", Users: user}, []string{"--api-key sets the Authorization header"}},
		{Endpoint{APIKey: "k", Headers: []string{"Authorization: x"}, Users: user}, []string{"-H Authorization and --api-key", "-H Authorization sets"}},
		{Endpoint{Users: user}, nil},
	} {
		got := tc.e.AuthWarnings()
		if len(got) != len(tc.want) {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tc.want[i]) {
				t.Errorf("%+v: %q, want %q", tc.e, got[i], tc.want[i])
			}
		}
	}
}

// TestRedactArgsExtraInputs: every value after one --extra-inputs is
// redacted where it is a secret.
func TestRedactArgsExtraInputs(t *testing.T) {
	got := strings.Join(RedactArgs([]string{"llmbench", "profile", "--extra-inputs", "temperature:0", "api_key:sk-9999", "--streaming", "--extra-inputs=hf_token:t-1"}), " ")
	want := "llmbench profile --extra-inputs temperature:0 api_key:<redacted> --streaming --extra-inputs=hf_token:<redacted>"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	p, err := parse(t, ExpandListArgs([]string{"-m", "m", "--extra-inputs", "temperature:0", "max_tokens:4096", "--streaming"}, ListFlags)...)
	if err != nil || len(p.Endpoint.ExtraInputs) != 2 || p.Endpoint.ExtraInputs[1] != "max_tokens:4096" || !p.Endpoint.Streaming {
		t.Fatalf("extra inputs %v (%v)", p.Endpoint.ExtraInputs, err)
	}
}

// TestAPIKeyFromEnvironment: LLMBENCH_API_KEY gives the key when the
// flag does not, the flag wins, and neither is ever in the redacted
// configuration.
func TestAPIKeyFromEnvironment(t *testing.T) {
	env := map[string]string{EnvAPIKey: " sk-from-env "}
	p, err := parseEnv(t, env, "-m", "m", "--mock", "--concurrency", "1", "--request-count", "1")
	if err != nil || p.Endpoint.APIKey != "sk-from-env" {
		t.Fatalf("key %q, %v", p.Endpoint.APIKey, err)
	}
	if b, _ := json.Marshal(p.Redacted()); strings.Contains(string(b), "sk-from-env") {
		t.Error("the redacted configuration holds the key")
	}
	p, err = parseEnv(t, env, "-m", "m", "--mock", "--concurrency", "1", "--request-count", "1", "--api-key", "sk-flag")
	if err != nil || p.Endpoint.APIKey != "sk-flag" {
		t.Errorf("the flag's key lost to the environment: %q, %v", p.Endpoint.APIKey, err)
	}
}
