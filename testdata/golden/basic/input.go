package basic

// ResizePayload resizes one image.
//
//leasegen:task
type ResizePayload struct {
	ImageID string `json:"image_id"`
	Width   int    `json:"width"`
}
