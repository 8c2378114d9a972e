package dataset

import (
	"fmt"
	"path/filepath"
	"strings"
)

// readRawPayload reads AIPerf's raw_payload format: one request body (a
// JSON object) per line, sent byte for byte. A file's lines are
// conversations of one turn each, in file order; in a directory, each
// .jsonl file (name order) is one conversation named for the file, its
// lines the turns. Every body carries its whole context, so no history is
// added in front of a later turn.
func readRawPayload(files []sourceFile, o FileOptions) ([]Conversation, error) {
	var convs []Conversation
	for fi := range files {
		f := &files[fi]
		var c *Conversation
		if f.inDir {
			convs = append(convs, Conversation{ID: strings.TrimSuffix(filepath.Base(f.name), ".jsonl"), Standalone: true})
			c = &convs[len(convs)-1]
		}
		for _, l := range f.lines {
			turn, err := parseRawPayloadLine(f, l, o.Corpus)
			if err != nil {
				return nil, err
			}
			if c != nil {
				c.Turns = append(c.Turns, turn)
				continue
			}
			convs = append(convs, Conversation{ID: fmt.Sprintf("session_%06d", len(convs)), Turns: []Turn{turn}, Standalone: true})
		}
	}
	return convs, nil
}

// parseRawPayloadLine reads one line of raw_payload: a request body.
func parseRawPayloadLine(f *sourceFile, l sourceLine, c *Corpus) (Turn, error) {
	t, problem := rawTurn(l.data, c)
	if problem != "" {
		return t, f.errorf(l, "%s", problem)
	}
	return t, nil
}
