module github.com/vito/bubbline

go 1.26
