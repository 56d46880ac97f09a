package gen

// The generator checks an annotation's tz= against the zone database it
// embeds, so that go generate gives the same answer on every machine.
import _ "time/tzdata"
