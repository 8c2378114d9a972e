package endpoint

import (
	"encoding/json"
	"testing"
)

func TestImageRetrievalBuild(t *testing.T) {
	png := MediaItem{URL: "data:image/png;base64,iVBORw0KGgo=", Format: "png"}
	jpeg := MediaItem{URL: "data:image/jpeg;base64,/9j/4AAQ", Format: "jpeg"}
	ntCheckBuilds(t, []ntBuildCase{
		{name: "images", kind: ImageRetrieval, in: Input{Model: "nvidia/nemoretriever-page-elements-v2", Prompt: "ignored", Images: []MediaItem{png, jpeg}},
			want: `{"input":[{"type":"image_url","url":"data:image/png;base64,iVBORw0KGgo="},{"type":"image_url","url":"data:image/jpeg;base64,/9j/4AAQ"}]}`},
		{name: "extras", kind: ImageRetrieval, in: Input{Images: []MediaItem{png}, Extra: []Field{{"threshold", json.RawMessage(`0.5`)}}},
			want: `{"input":[{"type":"image_url","url":"data:image/png;base64,iVBORw0KGgo="}],"threshold":0.5}`},
		{name: "no images", kind: ImageRetrieval, in: Input{Prompt: "a text"}, errHas: "needs at least one image"},
	})
}

func TestImageRetrievalRead(t *testing.T) {
	ntCheckReads(t, []ntReadCase{
		{kind: ImageRetrieval, file: "page_elements.json", items: 2},
		{kind: ImageRetrieval, file: "object.json", items: 1},
		{kind: ImageRetrieval, file: "empty.json", empty: true},
		{kind: ImageRetrieval, file: "error_nim.json", serverErr: "Image could not be decoded"},
	})
}
