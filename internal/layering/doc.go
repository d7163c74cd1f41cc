// Package layering holds TestLayering, which checks the import direction the
// README's layout table documents. It has no code of its own.
package layering
