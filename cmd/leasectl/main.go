// Command leasectl operates leasegen's task table: migrate, list, show,
// cancel, retry, purge and stats. Run it without arguments for usage.
package main

import (
	"os"

	"github.com/leasegen/leasegen/internal/leasectl"
)

func main() { os.Exit(leasectl.Main(os.Args[1:], os.Stdout, os.Stderr)) }
