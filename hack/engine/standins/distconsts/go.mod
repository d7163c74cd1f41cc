module github.com/dagger/dagger/engine/distconsts

go 1.26
