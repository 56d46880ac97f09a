module github.com/leasegen/leasegen

go 1.26.0

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/go-sql-driver/mysql v1.10.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
