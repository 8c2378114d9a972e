package dataset

import (
	"encoding/json"
	"fmt"
	"strings"
)

// dagConversation is one line of AIPerf's dag_jsonl: a session and its
// turns, with the branching fields llmbench refuses.
type dagConversation struct {
	SessionID        string          `json:"session_id"`
	Turns            []dagTurn       `json:"turns"`
	Orchestrator     bool            `json:"orchestrator"`
	Spawns           json.RawMessage `json:"spawns"`
	ThinkTimeMs      json.RawMessage `json:"think_time_ms"`
	ThinkTimeSigma   json.RawMessage `json:"think_time_sigma"`
	ThinkTimeMinMs   json.RawMessage `json:"think_time_min_ms"`
	ThinkTimeMaxMs   json.RawMessage `json:"think_time_max_ms"`
	Rounds           json.RawMessage `json:"rounds"`
	ContextMode      string          `json:"context_mode"`
	PreSessionSpawns json.RawMessage `json:"pre_session_spawns"`
}

type dagTurn struct {
	Messages  json.RawMessage `json:"messages"`
	Model     *string         `json:"model"`
	MaxTokens json.RawMessage `json:"max_tokens"`
	Tools     json.RawMessage `json:"tools"`
	Extra     json.RawMessage `json:"extra"`
	Forks     json.RawMessage `json:"forks"`
	Spawns    json.RawMessage `json:"spawns"`
	Delay     *float64        `json:"delay"`
}

const dagFields = "session_id, turns, orchestrator, spawns, think_time_ms, think_time_sigma, think_time_min_ms, think_time_max_ms, rounds, context_mode, pre_session_spawns; each turn messages, model, max_tokens, tools, extra, forks, spawns, delay"

// The context modes llmbench replays: AIPerf's default, where a turn's
// messages are appended to the session's history with the server's
// answers, and the one where each turn sends its own whole message array.
const (
	dagAccumulate = "deltas_without_responses"
	dagWhole      = "message_array_with_responses"
)

// readDag reads AIPerf's dag_jsonl as llmbench's multi-turn sessions: a
// line is a conversation whose turns are sent in order, each after its
// delay (ms) following the previous answer. In the default context mode a
// turn is one user message (the first turn may open with a system
// message, sent before every turn), appended to the history of earlier
// turns and answers, as multi_turn's turns are; with context_mode
// message_array_with_responses each turn sends its own message array and
// nothing else. A turn's model, max_tokens, tools and extra apply to its
// request alone.
//
// The DAG itself is refused: forks, spawns, pre_session_spawns,
// orchestrators and their rounds start and join sessions from a turn,
// which needs scheduling llmbench does not have.
func readDag(files []sourceFile, o FileOptions) ([]Conversation, error) {
	f := &files[0]
	convs := make([]Conversation, 0, len(f.lines))
	seen := map[string]int{}
	for _, l := range f.lines {
		c, err := parseDagLine(f, l, o.Corpus)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[c.ID]; dup {
			return nil, f.errorf(l, "session_id %q is already used on line %d", c.ID, prev)
		}
		seen[c.ID] = l.num
		convs = append(convs, c)
	}
	return convs, nil
}

func present(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null" && s != "[]"
}

func parseDagLine(f *sourceFile, l sourceLine, corpus *Corpus) (Conversation, error) {
	var line dagConversation
	if err := decodeLine(f, l, &line, dagFields); err != nil {
		return Conversation{}, err
	}
	if line.SessionID == "" {
		return Conversation{}, f.errorf(l, "no session_id: every dag_jsonl conversation names itself")
	}
	dag := func(what string) error {
		return f.errorf(l, "session %s: %s start and join other sessions, scheduling llmbench does not have; it replays dag_jsonl conversations without them as multi-turn sessions", line.SessionID, what)
	}
	switch {
	case line.Orchestrator || present(line.Spawns) || present(line.Rounds):
		return Conversation{}, dag("orchestrators (orchestrator, spawns, rounds)")
	case present(line.PreSessionSpawns):
		return Conversation{}, dag("pre_session_spawns")
	case present(line.ThinkTimeMs) || present(line.ThinkTimeSigma) || present(line.ThinkTimeMinMs) || present(line.ThinkTimeMaxMs):
		return Conversation{}, dag("orchestrator rounds (think_time_*)")
	case line.ContextMode != "" && line.ContextMode != dagAccumulate && line.ContextMode != dagWhole:
		return Conversation{}, f.errorf(l, "session %s: context_mode %q: llmbench replays %s (the default) and %s", line.SessionID, line.ContextMode, dagAccumulate, dagWhole)
	case len(line.Turns) == 0:
		return Conversation{}, f.errorf(l, "session %s: no turns", line.SessionID)
	}
	c := Conversation{ID: line.SessionID, Standalone: line.ContextMode == dagWhole}
	for k, t := range line.Turns {
		if present(t.Forks) || present(t.Spawns) {
			return Conversation{}, dag(fmt.Sprintf("turn %d's forks and spawns", k+1))
		}
		turn, err := t.turn(c.Standalone, k == 0, &c, corpus)
		if err != nil {
			return Conversation{}, f.errorf(l, "session %s turn %d: %v", line.SessionID, k+1, err)
		}
		c.Turns = append(c.Turns, turn)
	}
	return c, nil
}

// turn makes the request of one DAG turn. In the accumulating mode the
// first turn's leading system message becomes c's system prompt.
func (t *dagTurn) turn(whole, first bool, c *Conversation, corpus *Corpus) (Turn, error) {
	var out Turn
	text, err := chatMessagesText(t.Messages)
	if err != nil {
		return out, err
	}
	extra := map[string]json.RawMessage{}
	if present(t.Extra) {
		if err := json.Unmarshal(t.Extra, &extra); err != nil || extra == nil {
			return out, fmt.Errorf("extra must be a JSON object of request fields")
		}
	}
	if whole {
		extra["messages"] = t.Messages
		out.Text = text
	} else {
		var msgs []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(t.Messages, &msgs) // checked by chatMessagesText
		if first && len(msgs) == 2 && msgs[0].Role == "system" {
			sys, ok := plainText(msgs[0].Content)
			if !ok {
				return out, fmt.Errorf("the system message's content must be text")
			}
			c.System, c.SystemTokens = sys, corpus.Count(sys)
			msgs = msgs[1:]
		}
		prompt, ok := "", false
		if len(msgs) == 1 && msgs[0].Role == "user" {
			prompt, ok = plainText(msgs[0].Content)
		}
		if !ok {
			return out, fmt.Errorf("llmbench sends a turn as one user message of text (the first turn may open with a system message); send whole message arrays with \"context_mode\": %q", dagWhole)
		}
		out.Text = prompt
	}
	out.InputTokens = corpus.Count(out.Text)
	if present(t.MaxTokens) {
		var n int
		if err := json.Unmarshal(t.MaxTokens, &n); err != nil || n < 1 {
			return out, fmt.Errorf("max_tokens %s: want a whole number of at least 1", truncate(string(t.MaxTokens), 20))
		}
		out.MaxTokens = n
	}
	if t.Model != nil {
		m, _ := json.Marshal(*t.Model)
		extra["model"] = m
	}
	if present(t.Tools) {
		extra["tools"] = t.Tools
	}
	if t.Delay != nil {
		if !finiteNonNegative(*t.Delay) {
			return out, fmt.Errorf("delay %g: want milliseconds, not negative", *t.Delay)
		}
		out.DelayMs = *t.Delay
	}
	if len(extra) > 0 {
		raw, err := json.Marshal(extra)
		if err != nil {
			return out, err
		}
		out.Extra = raw
	}
	return out, nil
}

// plainText is a message content that is a string.
func plainText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
		return "", false
	}
	return s, true
}
