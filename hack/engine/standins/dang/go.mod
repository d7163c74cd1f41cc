module github.com/vito/dang/v2

go 1.26
