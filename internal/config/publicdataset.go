package config

import (
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/internal/dataset"
)

// PublicInput is --public-dataset (one of AIPerf's named sets, found in
// the Hugging Face cache or downloaded into it) and llmbench's own
// --public-dataset-path (a local copy of its file).
type PublicInput struct {
	PublicDataset     string `json:"public_dataset,omitempty"`
	PublicDatasetPath string `json:"public_dataset_path,omitempty"`
}

// bindPublicDatasetFlags registers the public dataset flags in the current
// section.
func (f *Flags) bindPublicDatasetFlags() {
	in := &f.p.Input
	f.vars((*stringValue)(&in.PublicDataset), "AIPerf's named public dataset to send instead of synthetic prompts, read from the Hugging Face cache or downloaded into it (HF_HUB_CACHE, HF_ENDPOINT, HF_HUB_OFFLINE); llmbench sends the text ones: sharegpt, aimo*, spec_al_*, spec_bench, instruct_coder, blazedit_*.", "public-dataset")
	f.vars((*stringValue)(&in.PublicDatasetPath), "llmbench's own: a local copy of the --public-dataset's file (ShareGPT's JSON, a split's Parquet or JSON Lines), read instead of the cache.", "public-dataset-path")
}

// finishPublicDataset checks the public dataset flags against the name
// list and the other dataset sources.
func (p *Profile) finishPublicDataset() error {
	in := &p.Input
	switch {
	case in.PublicDataset == "" && in.PublicDatasetPath != "":
		return errors.New("--public-dataset-path is a copy of a --public-dataset's file: give --public-dataset too")
	case in.PublicDataset == "":
		return nil
	case in.File != "" || p.set["custom-dataset-type"]:
		return fmt.Errorf("--public-dataset %s brings its own prompts: drop --input-file and --custom-dataset-type", in.PublicDataset)
	case in.PrefixPrompt.PoolSize > 0 || in.SharedSystemPrompt > 0:
		return errors.New("--prompt-prefix-pool-size and --shared-system-prompt-length shape synthetic prompts; a --public-dataset brings its own")
	}
	d, err := dataset.LookupPublic(in.PublicDataset)
	if err != nil {
		return err
	}
	if d.URL != "" && in.PublicDatasetPath == "" {
		return fmt.Errorf("--public-dataset %s is published at %s, not on the Hugging Face Hub: download it and pass it with --public-dataset-path", d.Name, d.URL)
	}
	return nil
}
