package endpoint

// Type is k's implementation; nil for an unknown kind. Each type is one
// file of this package; adding one is a case here.
func (k Kind) Type() Type {
	switch k {
	case Chat:
		return chatType{}
	case Completions:
		return completionsType{}
	case Embeddings:
		return embeddingsType{}
	case ChatEmbeddings:
		return chatEmbeddingsType{}
	case NIMEmbeddings:
		return nimEmbeddingsType{}
	case CohereRankings:
		return cohereRankingsType{}
	case HFTEIRankings:
		return hfTEIRankingsType{}
	case NIMRankings:
		return nimRankingsType{}
	case HuggingFaceGenerate:
		return huggingFaceGenerateType{}
	case SolidoRAG:
		return solidoRAGType{}
	case ImageRetrieval:
		return imageRetrievalType{}
	case Responses:
		return responsesType{}
	case Messages:
		return messagesType{}
	case ImageGeneration:
		return imageGenType{}
	case ImageEdit:
		return imageEditType{}
	case VideoGeneration:
		return videoGenType{}
	case AudioTranscription:
		return audioTranscriptionType{}
	case Raw:
		return rawType{}
	case Template:
		return templateType{}
	}
	return nil
}
