// Package teav1 stands in for github.com/vito/tuist/teav1, which the Go module
// proxy does not serve: it adapts a bubbletea v1 model into a tuist component.
package teav1

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/vito/tuist"
)

// Wrap is a bubbletea v1 model shown as a component.
type Wrap struct {
	tuist.Compo
	model  tea.Model
	onQuit func()
}

// New wraps model.
func New(model tea.Model) *Wrap { return &Wrap{model: model} }

// OnQuit sets what runs when the model quits.
func (w *Wrap) OnQuit(fn func()) { w.onQuit = fn }

// Render emits the model's view.
func (w *Wrap) Render(ctx tuist.Context) {
	ctx.Lines(strings.Split(strings.TrimSuffix(w.model.View(), "\n"), "\n")...)
}
