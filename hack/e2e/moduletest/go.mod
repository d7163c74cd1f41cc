module dagger/miles-ci-test

go 1.26.1
