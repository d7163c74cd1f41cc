module github.com/vito/tuist

go 1.26

require github.com/charmbracelet/ultraviolet v0.0.0-20260309091805-903bfd0cf188
