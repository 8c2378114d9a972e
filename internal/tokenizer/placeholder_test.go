package tokenizer

import "testing"

// TestPlaceholderModels: the names AIPerf's documentation uses for "your
// model" count with the builtin tokenizer; real model ids keep their own.
func TestPlaceholderModels(t *testing.T) {
	for model, want := range map[string]string{
		"your-model": BuiltinName, "mock-model": BuiltinName, "test-model": BuiltinName, "fake-model": BuiltinName,
		"dummy": BuiltinName, "example-llm": BuiltinName, "org/sample_model": BuiltinName, "placeholder": BuiltinName, "": BuiltinName,
		"Qwen/Qwen3-0.6B": "Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct",
		"mistralai/Mistral-7B-Instruct-v0.3": "mistralai/Mistral-7B-Instruct-v0.3", "testudo-7b": "testudo-7b",
	} {
		if got := DefaultFor(model); got != want {
			t.Errorf("DefaultFor(%q) = %q, want %q", model, got, want)
		}
	}
}
