package leasemysql

import (
	"errors"
	"testing"
	"time"
)

func TestOpenConfig(t *testing.T) {
	for _, tc := range []struct {
		dsn         string
		interpolate bool
	}{
		{"u:p@tcp(db:3306)/app", true},
		{"u:p@tcp(db:3306)/app?parseTime=false&loc=Local", true},
		{"u:p@tcp(db:3306)/app?interpolateParams=false", false},
		{"u:p@tcp(db:3306)/app?interpolateParams=true", true},
	} {
		cfg, err := openConfig(tc.dsn)
		if err != nil {
			t.Fatalf("openConfig(%q): %v", tc.dsn, err)
		}
		if !cfg.ParseTime || cfg.Loc != time.UTC || cfg.Params["time_zone"] != "'+00:00'" {
			t.Errorf("openConfig(%q): parseTime %v, loc %v, time_zone %q; want true, UTC, '+00:00'",
				tc.dsn, cfg.ParseTime, cfg.Loc, cfg.Params["time_zone"])
		}
		if cfg.InterpolateParams != tc.interpolate {
			t.Errorf("openConfig(%q): interpolateParams %v, want %v", tc.dsn, cfg.InterpolateParams, tc.interpolate)
		}
	}
	if _, err := Open("not a dsn"); !errors.Is(err, ErrBadDSN) {
		t.Errorf("Open(bad DSN) err = %v, want ErrBadDSN", err)
	}
}
