package main

import (
	"github.com/radixark/miles-ci/internal/encode"
	"github.com/radixark/miles-ci/internal/typedjson"
	"github.com/radixark/miles-ci/usecase"
)

// The query functions answer with the typed objects of answers.gen.go,
// which internal/typedjson generates from the Go types the command encodes
// with --json: each JSON key is a field (est_time: estTime), and json is the
// command's JSON itself, byte for byte.

// answerOf is T filled from v, its JSON that of v, with msgs.
func answerOf[T any](v any, msgs []usecase.Message) (*T, error) {
	js, err := jsonString(v)
	if err != nil {
		return nil, err
	}
	return answerWith[T](v, js, msgs, nil)
}

// answerWith is T filled from fields (as the command encodes them), with js
// its JSON, msgs its messages and more its other fields by Go name.
func answerWith[T any](fields any, js string, msgs []usecase.Message, more map[string]any) (*T, error) {
	data, err := encode.JSON(fields)
	if err != nil {
		return nil, err
	}
	with := map[string]any{typedjson.JSONField: js, "Messages": messagesOf(msgs)}
	for k, v := range more {
		with[k] = v
	}
	t := new(T)
	if err := typedjson.Fill(t, data, with); err != nil {
		return nil, err
	}
	return t, nil
}

// messagesOf are a use case's messages as the answers' Message objects.
func messagesOf(msgs []usecase.Message) []*Message {
	out := []*Message{}
	for _, m := range msgs {
		out = append(out, &Message{Level: m.Level, Text: m.Text})
	}
	return out
}

// notesOf are a request's notes (what its planning found, label warnings
// among them) as messages.
func notesOf(notes []string) []usecase.Message {
	var out []usecase.Message
	for _, n := range notes {
		out = append(out, usecase.Message{Level: "notice", Text: n})
	}
	return out
}
