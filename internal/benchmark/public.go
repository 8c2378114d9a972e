package benchmark

import (
	"context"
	"errors"
	"fmt"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/hfhub"
)

// fetchPublicDataset finds the file of the run's --public-dataset, unless
// --public-dataset-path gives it: in the Hugging Face cache, else
// downloaded into it, as tokenizers are found. p's path is set to it.
func fetchPublicDataset(ctx context.Context, p *config.Profile) error {
	return fetchPublicDatasetFrom(ctx, p, hfhub.Options{})
}

func fetchPublicDatasetFrom(ctx context.Context, p *config.Profile, o hfhub.Options) error {
	in := &p.Input
	if in.PublicDataset == "" || in.PublicDatasetPath != "" {
		return nil
	}
	d, err := dataset.LookupPublic(in.PublicDataset)
	if err != nil {
		return err
	}
	if d.Repo == "" {
		return fmt.Errorf("--public-dataset %s is published at %s, not on the Hugging Face Hub: download it and pass it with --public-dataset-path", d.Name, d.URL)
	}
	o.Revision = d.Revision
	path, err := hfhub.ResolveDataset(ctx, d.Repo, d.File, o)
	if err != nil {
		var nf *hfhub.NotFoundError
		if !errors.As(err, &nf) {
			return fmt.Errorf("--public-dataset %s: %w", d.Name, err)
		}
		rev := ""
		if d.Revision != "main" {
			rev = " --revision " + d.Revision
		}
		return fmt.Errorf("--public-dataset %s: %v: download it (huggingface-cli download --repo-type dataset %s %s%s) or pass a local copy with --public-dataset-path FILE",
			d.Name, err, d.Repo, d.File, rev)
	}
	in.PublicDatasetPath = path
	return nil
}

// publicConversations reads the run's --public-dataset from its file.
func publicConversations(p config.Profile, corpus *dataset.Corpus) ([]dataset.Conversation, error) {
	in := p.Input
	if in.PublicDatasetPath == "" {
		return nil, fmt.Errorf("--public-dataset %s: its file was not looked up before the run", in.PublicDataset)
	}
	return dataset.ReadPublic(in.PublicDataset, in.PublicDatasetPath, dataset.PublicOptions{
		Corpus: corpus, OutputGiven: in.Prompt.OutputTokens.Mean > 0,
	})
}
