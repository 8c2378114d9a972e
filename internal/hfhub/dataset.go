package hfhub

import (
	"context"
	"fmt"
	"strings"
)

func (f hubFile) kind() string {
	if f.dataset {
		return "dataset"
	}
	return "model"
}

// NotFoundError says a dataset file is neither in the cache nor
// downloadable: Tried is the cache path looked at, Err why the download
// was not made or failed.
type NotFoundError struct {
	Repo, File, Tried string
	Offline           bool
	Err               error
}

func (e *NotFoundError) Error() string {
	if e.Offline {
		return fmt.Sprintf("%s of dataset %s is not in the Hugging Face cache (looked in %s) and HF_HUB_OFFLINE is set", e.File, e.Repo, e.Tried)
	}
	return fmt.Sprintf("%s of dataset %s is not in the Hugging Face cache (looked in %s), and %v", e.File, e.Repo, e.Tried, e.Err)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// ResolveDataset returns the path of file (a path inside the repository,
// slash-separated) of the Hub dataset repo at o.Revision: from the cache
// (datasets--org--name), else downloaded into it from HF_ENDPOINT's
// /datasets/<repo>/resolve/<revision>/<file>, as huggingface_hub does.
// A *NotFoundError says neither worked.
func ResolveDataset(ctx context.Context, repo, file string, o Options) (string, error) {
	if !repoID.MatchString(repo) || strings.Contains(repo, "..") || strings.Contains(file, "..") {
		return "", fmt.Errorf("dataset %q: not a Hugging Face dataset id", repo)
	}
	f := hubFile{repo: repo, name: file, dataset: true}
	cached, tried := o.cached(f)
	if cached != "" {
		return cached, nil
	}
	if off := o.env("HF_HUB_OFFLINE"); off != "" && off != "0" && !strings.EqualFold(off, "false") {
		return "", &NotFoundError{Repo: repo, File: file, Tried: tried, Offline: true}
	}
	path, err := o.download(ctx, f)
	if err != nil {
		return "", &NotFoundError{Repo: repo, File: file, Tried: tried, Err: err}
	}
	return path, nil
}
