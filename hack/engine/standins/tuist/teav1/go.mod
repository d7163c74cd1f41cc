module github.com/vito/tuist/teav1

go 1.26

require (
	github.com/charmbracelet/bubbletea v1.3.10
	github.com/vito/tuist v0.0.6
)
