// Package tuist stands in for github.com/vito/tuist, a terminal UI toolkit that
// the Go module proxy does not serve. Dagger links it into its interactive
// progress display. This stand-in keeps the API Dagger uses and renders
// components to lines on demand, but never takes over a terminal: builds that
// use it must run with no terminal attached or with --progress=plain.
package tuist

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
)

// Context is what a component renders into: its size and the lines it emits.
type Context struct {
	context.Context
	Width  int
	Height int
	screen int
	out    *[]string
	tui    *TUI
}

// Line emits one line.
func (c Context) Line(s string) { c.Lines(s) }

// Lines emits lines.
func (c Context) Lines(ls ...string) {
	if c.out != nil {
		*c.out = append(*c.out, ls...)
	}
}

// ScreenHeight is the height of the whole screen.
func (c Context) ScreenHeight() int { return c.screen }

// Resize returns a context of another size that emits into a fresh buffer.
func (c Context) Resize(w, h int) Context {
	c.Width, c.Height = w, h
	c.out = new([]string)
	return c
}

// SetFocus moves the focus to comp.
func (c Context) SetFocus(comp Component) {
	if c.tui != nil {
		c.tui.SetFocus(comp)
	}
}

func (c Context) ctx() context.Context {
	if c.Context == nil {
		return context.Background()
	}
	return c.Context
}

// Component is anything that renders lines.
type Component interface {
	Render(ctx Context)
}

// Focusable components are told when they gain or lose focus.
type Focusable interface {
	SetFocused(ctx Context, focused bool)
}

// Mounter components are told when they are added to a tree.
type Mounter interface {
	OnMount(ctx Context)
}

// Dismounter components are told when they are removed from a tree.
type Dismounter interface {
	OnDismount()
}

// Interactive components handle key presses.
type Interactive interface {
	HandleKeyPress(ctx Context, ev uv.KeyPressEvent) bool
}

// MouseEvent is a mouse event at a row and column of a component.
type MouseEvent struct {
	uv.MouseEvent
	Row, Col int
}

// MouseEnabled components handle mouse events.
type MouseEnabled interface {
	HandleMouse(ctx Context, ev MouseEvent) bool
}

// Hoverable components are told when the pointer enters or leaves them.
type Hoverable interface {
	SetHovered(ctx Context, hovered bool)
}

// RenderResult is the output of rendering one child.
type RenderResult struct {
	Lines []string
}

// Compo is embedded by components; it tracks whether they need rendering again.
type Compo struct {
	mu    sync.Mutex
	dirty bool
}

// Update marks the component as needing a render.
func (c *Compo) Update() {
	c.mu.Lock()
	c.dirty = true
	c.mu.Unlock()
}

// RenderChild renders child into ctx.
func (c *Compo) RenderChild(ctx Context, child Component) {
	ctx.Lines(c.RenderChildResult(ctx, child).Lines...)
}

// RenderChildResult renders child and returns its lines.
func (c *Compo) RenderChildResult(ctx Context, child Component) RenderResult {
	var lines []string
	if child != nil {
		cc := ctx
		cc.out = &lines
		child.Render(cc)
	}
	return RenderResult{Lines: lines}
}

// RenderChildInline renders child and joins its lines.
func (c *Compo) RenderChildInline(ctx Context, child Component) string {
	lines := c.RenderChildResult(ctx, child).Lines
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += " "
		}
		out += l
	}
	return out
}

// Container renders its children one after another.
type Container struct {
	Compo
	Children []Component
}

// AddChild appends a child.
func (c *Container) AddChild(child Component) {
	c.Children = append(c.Children, child)
	c.Update()
}

// RemoveChild removes a child.
func (c *Container) RemoveChild(child Component) {
	for i, ch := range c.Children {
		if ch == child {
			c.Children = append(c.Children[:i:i], c.Children[i+1:]...)
			break
		}
	}
	c.Update()
}

// Render renders every child.
func (c *Container) Render(ctx Context) {
	for _, ch := range c.Children {
		c.RenderChild(ctx, ch)
	}
}

// Terminal is where a TUI draws.
type Terminal interface {
	io.Writer
}

// NewStdTerminal returns the process's standard output as a terminal.
func NewStdTerminal() Terminal { return os.Stdout }

// TUI owns a tree of components.
type TUI struct {
	Container
	term  Terminal
	focus Component
	debug io.Writer
	mu    sync.Mutex
}

// New returns a TUI drawing on term.
func New(term Terminal) *TUI { return &TUI{term: term} }

// Start would take over the terminal; the stand-in draws nothing.
func (t *TUI) Start() error { return nil }

// Stop releases the terminal.
func (t *TUI) Stop() {}

// Dispatch runs fn on the UI goroutine (here: at once, serialised).
func (t *TUI) Dispatch(fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn()
}

// Exec runs fn with the terminal's streams while the UI is suspended.
func (t *TUI) Exec(fn func(in io.Reader, out io.Writer, errOut io.Writer) error) error {
	return fn(os.Stdin, os.Stdout, os.Stderr)
}

// RequestRender asks for a new frame.
func (t *TUI) RequestRender(full ...bool) {}

// RenderLines renders the whole tree to lines.
func (t *TUI) RenderLines() []string {
	var lines []string
	t.Container.Render(Context{Context: context.Background(), Width: 80, Height: 24, screen: 24, out: &lines, tui: t})
	return lines
}

// SetDebugWriter sets where debug output goes.
func (t *TUI) SetDebugWriter(w io.Writer) { t.debug = w }

// SetFocus gives comp the focus.
func (t *TUI) SetFocus(comp Component) {
	ctx := Context{Context: context.Background(), tui: t}
	if f, ok := t.focus.(Focusable); ok && t.focus != nil {
		f.SetFocused(ctx, false)
	}
	t.focus = comp
	if f, ok := comp.(Focusable); ok && comp != nil {
		f.SetFocused(ctx, true)
	}
}

// SetShowHardwareCursor shows or hides the cursor.
func (t *TUI) SetShowHardwareCursor(bool) {}

// SizeValue is an absolute or relative size.
type SizeValue struct{ abs int }

// SizeAbs is an absolute size in cells.
func SizeAbs(n int) SizeValue { return SizeValue{abs: n} }

// Anchor is where an overlay sits.
type Anchor int

// Overlay anchors.
const (
	AnchorTopLeft Anchor = iota
	AnchorTopRight
	AnchorBottomLeft
	AnchorBottomRight
)

// OverlayMargin is the space around an overlay.
type OverlayMargin struct{ Top, Right, Bottom, Left int }

// OverlayOptions place an overlay.
type OverlayOptions struct {
	Width  SizeValue
	Height SizeValue
	Anchor Anchor
	Margin OverlayMargin
}

// OverlayHandle removes an overlay.
type OverlayHandle struct{ remove func() }

// Remove removes the overlay.
func (h *OverlayHandle) Remove() {
	if h != nil && h.remove != nil {
		h.remove()
	}
}

// ShowOverlay shows comp above the tree.
func (t *TUI) ShowOverlay(comp Component, _ *OverlayOptions) *OverlayHandle {
	return &OverlayHandle{}
}

// Spinner is an animated status glyph.
type Spinner struct {
	Compo
	Epoch  time.Time
	Frames []string
}

// NewSpinner returns a spinner.
func NewSpinner() *Spinner { return &Spinner{Frames: []string{"-", "\\", "|", "/"}} }

// Render emits the current frame.
func (s *Spinner) Render(ctx Context) {
	n := int(time.Since(s.Epoch)/(100*time.Millisecond)) % len(s.Frames)
	ctx.Line(s.Frames[n])
}

// TextInput is a one-line text editor.
type TextInput struct {
	Compo
	Prompt         string
	OnSubmit       func(ctx Context, value string) bool
	KeyInterceptor func(ctx Context, ev uv.KeyPressEvent) bool
	value          []rune
	cursor         int
}

// NewTextInput returns an input holding value.
func NewTextInput(value string) *TextInput {
	t := &TextInput{}
	t.SetValue(value)
	return t
}

// Value returns the text.
func (t *TextInput) Value() string { return string(t.value) }

// SetValue replaces the text and moves the cursor to its end.
func (t *TextInput) SetValue(v string) {
	t.value = []rune(v)
	t.cursor = len(t.value)
	t.Update()
}

// InsertRune inserts r at the cursor.
func (t *TextInput) InsertRune(r rune) {
	t.value = append(t.value[:t.cursor:t.cursor], append([]rune{r}, t.value[t.cursor:]...)...)
	t.cursor++
	t.Update()
}

// Render emits the prompt and text.
func (t *TextInput) Render(ctx Context) { ctx.Line(t.Prompt + string(t.value)) }

// HandleKeyPress gives the interceptor the first look at a key.
func (t *TextInput) HandleKeyPress(ctx Context, ev uv.KeyPressEvent) bool {
	if t.KeyInterceptor != nil {
		return t.KeyInterceptor(ctx, ev)
	}
	return false
}

// Completion is one completion candidate.
type Completion struct {
	Label       string
	Value       string
	Detail      string
	Description string
}

// CompletionResult is the candidates for an input and where they replace it.
type CompletionResult struct {
	Items       []Completion
	ReplaceFrom int
}

// CompletionMenu offers completions for a text input.
type CompletionMenu struct {
	Compo
	input    *TextInput
	complete func(input string, cursorPos int) CompletionResult
}

// NewCompletionMenu returns a menu for input.
func NewCompletionMenu(input *TextInput, complete func(input string, cursorPos int) CompletionResult) *CompletionMenu {
	return &CompletionMenu{input: input, complete: complete}
}

// Render emits nothing: the stand-in shows no menu.
func (m *CompletionMenu) Render(Context) {}

// HandleKeyPress handles no keys.
func (m *CompletionMenu) HandleKeyPress(Context, uv.KeyPressEvent) bool { return false }
