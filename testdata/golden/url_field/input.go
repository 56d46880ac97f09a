package url_field

import "net/url"

// FetchPayload holds a url.URL, whose User field JSON cannot encode.
//
//leasegen:task
type FetchPayload struct {
	Target url.URL
}
