package record

import (
	"regexp"
	"testing"
	"time"
)

func TestUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, x := range [][2]uint64{{0, 0}, {^uint64(0), ^uint64(0)}, {0x0123456789abcdef, 0xfedcba9876543210}} {
		if u := UUID(x[0], x[1]); !re.MatchString(u) {
			t.Errorf("UUID(%x, %x) = %q is not a v4 UUID", x[0], x[1], u)
		}
	}
	// Bytes in little-endian order of hi then lo, version and variant set
	// (the value the fmt-based version gave).
	if u := UUID(0x0123456789abcdef, 0xfedcba9876543210); u != "efcdab89-6745-4301-9032-547698badcfe" {
		t.Errorf("UUID = %s", u)
	}
	if UUID(0, 0) != "00000000-0000-4000-8000-000000000000" {
		t.Errorf("UUID(0,0) = %s", UUID(0, 0))
	}
}

func TestClock(t *testing.T) {
	c := ClockAt(1_000)
	a := c.Now()
	time.Sleep(2 * time.Millisecond)
	b := c.Now()
	if b-a < int64(2*time.Millisecond) {
		t.Fatalf("perf clock advanced %d ns over a 2 ms sleep", b-a)
	}
	if c.Wall(500) != 1_500 {
		t.Fatalf("Wall(500) = %d, want 1500", c.Wall(500))
	}
	if c.Perf(time.Now()) < b {
		t.Fatal("Perf(now) went backwards")
	}
}
