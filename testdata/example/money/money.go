// Package money is a dependency of the example service: payloads may use
// types from other packages.
package money

// Amount is a sum of money in minor units.
type Amount struct {
	Cents    int64  `json:"cents"`
	Currency string `json:"currency"`
}
