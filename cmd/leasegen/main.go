// Command leasegen generates typed task APIs from //leasegen:task
// annotations; see package github.com/leasegen/leasegen/gen.
package main

import (
	"os"

	"github.com/leasegen/leasegen/gen"
)

func main() { os.Exit(gen.Main(os.Args[1:], os.Stderr)) }
