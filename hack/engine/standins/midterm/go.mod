module github.com/vito/midterm

go 1.26
