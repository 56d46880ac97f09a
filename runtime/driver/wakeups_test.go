package driver

import "testing"

// Notify wakes only the subscribers of the task's type, never blocks on a
// channel that holds a wake-up already, and forgets unsubscribed channels.
func TestLocalWakeups(t *testing.T) {
	var l LocalWakeups
	mail, sms := make(chan struct{}, 1), make(chan struct{}, 1)
	l.Subscribe(mail, []string{"mail", "both"})
	l.Subscribe(sms, []string{"sms", "both"})

	l.Notify("mail")
	l.Notify("mail") // the channel is full: must not block
	if len(mail) != 1 || len(sms) != 0 {
		t.Fatalf("after Notify(mail): mail %d, sms %d wake-ups; want 1, 0", len(mail), len(sms))
	}
	<-mail
	l.Unsubscribe(mail)
	l.Notify("both")
	if len(mail) != 0 || len(sms) != 1 {
		t.Errorf("after Unsubscribe(mail), Notify(both): mail %d, sms %d; want 0, 1", len(mail), len(sms))
	}
}
