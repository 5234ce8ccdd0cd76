package shuffle

import (
	"bytes"
	"compress/gzip"
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	f32 := []float32{0, -0, 1.5, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, math.MaxFloat32}
	b := Encode([]byte("head"), f32)
	f64 := []float64{math.Pi, -1e-300, math.NaN()}
	b = Encode(b, f64)
	b = append(b, "tail"...)
	got32, rest, err := Decode[float32](b[4:], len(f32))
	if err != nil {
		t.Fatal(err)
	}
	got64, rest, err := Decode[float64](rest, len(f64))
	if err != nil {
		t.Fatal(err)
	}
	if string(rest) != "tail" {
		t.Errorf("rest %q, want tail", rest)
	}
	for i := range f32 {
		if math.Float32bits(got32[i]) != math.Float32bits(f32[i]) {
			t.Errorf("float32 %d: %v, want %v", i, got32[i], f32[i])
		}
	}
	for i := range f64 {
		if math.Float64bits(got64[i]) != math.Float64bits(f64[i]) {
			t.Errorf("float64 %d: %v, want %v", i, got64[i], f64[i])
		}
	}
	if _, _, err := Decode[float64](b[:10], 2); err == nil {
		t.Error("Decode of 10 bytes as 2 float64: no error")
	}
}

// TestLayout checks the shuffled order itself: byte k of value i at k·n + i.
func TestLayout(t *testing.T) {
	b := Encode(nil, []float32{math.Float32frombits(0x04030201), math.Float32frombits(0x08070605)})
	if want := []byte{1, 5, 2, 6, 3, 7, 4, 8}; !bytes.Equal(b, want) {
		t.Errorf("Encode = %v, want %v", b, want)
	}
}

// TestCompresses checks what the shuffle is for: a slowly varying series compresses better
// shuffled than interleaved.
func TestCompresses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 10000)
	for i := range v {
		v[i] = 0.17 * float32(math.Exp(-float64(i)/3000)) * (1 + 0.05*float32(r.NormFloat64()))
	}
	plain := make([]byte, 0, 4*len(v))
	for _, x := range v {
		u := math.Float32bits(x)
		plain = append(plain, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	gz := func(b []byte) int {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w.Write(b)
		w.Close()
		return buf.Len()
	}
	if s, p := gz(Encode(nil, v)), gz(plain); s >= p {
		t.Errorf("gzip of the shuffled series %d bytes, of the plain one %d: the shuffle does not help", s, p)
	} else {
		t.Logf("gzip: shuffled %d bytes, plain %d (%d values)", s, p, len(v))
	}
}
