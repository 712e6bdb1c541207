package llm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/researchd/researchd/engine"
)

// draftTokens bounds one drafting answer (an expert configuration, a plan, a workflow).
const draftTokens = 4096

// DraftJSON answers one prompt with a JSON object that matches schema: the expert authoring
// endpoints use it when a model is configured. The answer is validated here, so a caller gets a
// schema-valid object or an error, never a half-right one.
func (e *openaiEngine) DraftJSON(ctx context.Context, system, user string, schema map[string]any) (map[string]any, error) {
	sch, err := engine.CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	resp, err := e.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:               e.opts.Model,
		Messages:            []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(user)},
		MaxCompletionTokens: openai.Int(draftTokens),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "draft", Schema: schema, Strict: openai.Bool(false)},
			},
		},
	})
	if err != nil {
		return nil, e.mapError(ctx, &providerCallError{err})
	}
	if len(resp.Choices) == 0 {
		return nil, engine.Errorf(engine.CodeProviderError, "the provider returned no choices")
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stripFence(resp.Choices[0].Message.Content)), &out); err != nil || out == nil {
		return nil, engine.Errorf(engine.CodeStructuredOutputInvalid, "the model's answer is not a JSON object")
	}
	if err := engine.ValidateOutput(sch, out); err != nil {
		return nil, fmt.Errorf("draft: %w", err)
	}
	return out, nil
}
