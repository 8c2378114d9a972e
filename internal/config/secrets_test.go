package config

import "testing"

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
