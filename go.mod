module github.com/radixark/miles-ci

go 1.26
