package tasks

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// idxBytes encodes an IDX file with the given type code, dimensions and data.
func idxBytes(typ byte, dims []int, data []byte) []byte {
	var buf bytes.Buffer
	buf.Write([]byte{0, 0, typ, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&buf, binary.BigEndian, uint32(d))
	}
	buf.Write(data)
	return buf.Bytes()
}

func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

func TestDecodeIDX(t *testing.T) {
	pixels := []byte{0, 1, 2, 3, 250, 251, 252, 255, 9, 8, 7, 6}
	tests := []struct {
		name     string
		file     []byte
		wantDims []int
		wantData []byte
	}{
		{"labels", idxBytes(8, []int{3}, []byte{7, 0, 9}), []int{3}, []byte{7, 0, 9}},
		{"images", idxBytes(8, []int{3, 2, 2}, pixels), []int{3, 2, 2}, pixels},
		{"images gzip", gzipBytes(idxBytes(8, []int{3, 2, 2}, pixels)), []int{3, 2, 2}, pixels},
		{"empty set", idxBytes(8, []int{0, 28, 28}, nil), []int{0, 28, 28}, []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeIDX(bytes.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Dims, tc.wantDims) || !bytes.Equal(got.Data, tc.wantData) {
				t.Errorf("got dims %v data %v, want %v %v", got.Dims, got.Data, tc.wantDims, tc.wantData)
			}
		})
	}
}

func TestDecodeIDXErrors(t *testing.T) {
	noise := make([]byte, 4096)
	rand.NewChaCha8([32]byte{1}).Read(noise)
	gz := gzipBytes(idxBytes(8, []int{4096}, noise))
	truncatedGzip := gz[:len(gz)/2]
	tests := []struct {
		name, want string
		file       []byte
	}{
		{"empty", "header", nil},
		{"bad magic", "magic", idxBytes(8, []int{1}, []byte{1})[1:]},
		{"float type", "type code 0x0d", idxBytes(0x0d, []int{1}, []byte{0, 0, 0, 0})},
		{"rank 0", "rank 0", idxBytes(8, nil, nil)},
		{"short dims", "dimension 1", idxBytes(8, []int{2, 2}, nil)[:9]},
		{"truncated data", "truncated: 3 bytes, want 4", idxBytes(8, []int{2, 2}, []byte{1, 2, 3})},
		{"trailing data", "trailing", idxBytes(8, []int{2}, []byte{1, 2, 3})},
		{"huge", "MaxIDXBytes", idxBytes(8, []int{1 << 16, 1 << 16}, nil)},
		{"bad gzip", "gzip", []byte{0x1f, 0x8b, 1, 2, 3}},
		// Incompressible data cut in the middle of the deflate stream: the header decodes,
		// the data does not (the cut does not depend on the compressor's exact output).
		{"truncated gzip", "IDX data (4096 bytes for dimensions [4096]): unexpected EOF", truncatedGzip},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeIDX(bytes.NewReader(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestReadIDXNamesFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad-idx1-ubyte.gz")
	if err := os.WriteFile(bad, []byte{0, 0, 9, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing-idx3-ubyte.gz")} {
		if _, err := ReadIDX(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadIDX(%q) error = %v, want one naming the file", path, err)
		}
	}
}

// fakeMNIST writes a 3-image test set into a temporary directory: gzip images, plain labels.
// Image k has pixel p = (7k + p) mod 256.
func fakeMNIST(t *testing.T) (dir string, pixels []byte, labels []byte) {
	t.Helper()
	dir, labels = t.TempDir(), []byte{2, 0, 9}
	pixels = make([]byte, 3*MNISTPixels)
	for j := range pixels {
		pixels[j] = byte(7*(j/MNISTPixels) + j%MNISTPixels)
	}
	files := map[string][]byte{
		"t10k-images-idx3-ubyte.gz": gzipBytes(idxBytes(8, []int{3, 28, 28}, pixels)),
		"t10k-labels-idx1-ubyte":    idxBytes(8, []int{3}, labels),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, pixels, labels
}

func TestPixelMNISTLayout(t *testing.T) {
	dir, pixels, labels := fakeMNIST(t)
	for _, task := range []PixelMNIST{{Dir: dir}, {Dir: dir, Permuted: true, Seed: 4}} {
		t.Run(task.String(), func(t *testing.T) {
			b, err := task.Examples(0, 3)
			if err != nil {
				t.Fatal(err)
			}
			if b.Len != 784 || b.NumIn != 1 || b.NumClasses != 10 || b.Y != nil {
				t.Fatalf("got Len, NumIn, NumClasses = %d, %d, %d, want 784, 1, 10", b.Len, b.NumIn, b.NumClasses)
			}
			perm := task.Permutation()
			sorted, identity := slices.Sorted(slices.Values(perm)), true
			for j := range sorted {
				if sorted[j] != j {
					t.Fatalf("Permutation() = %v, want a permutation of 0..783", perm)
				}
				identity = identity && perm[j] == j
			}
			if identity == task.Permuted {
				t.Errorf("Permutation() is identity = %v, want %v", identity, !task.Permuted)
			}
			for i := range 3 {
				for step := range 784 {
					want := float32(pixels[i*784+perm[step]]) / 255
					if got := b.At(i, step, 0); got != want {
						t.Fatalf("image %d step %d: got pixel %g, want %g", i, step, got, want)
					}
					wantLabel, wantMask := int32(0), float32(0)
					if step == 783 {
						wantLabel, wantMask = int32(labels[i]), 1
					}
					if b.Label(i, step) != wantLabel || b.MaskAt(i, step) != wantMask {
						t.Fatalf("image %d step %d: got label %d mask %g, want %d %g",
							i, step, b.Label(i, step), b.MaskAt(i, step), wantLabel, wantMask)
					}
				}
			}
			// Sampled images are whole images from the set.
			s, err := task.Sample(newRNG(1), 20)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				k := slices.IndexFunc([]int{0, 1, 2}, func(k int) bool {
					return slices.Equal(s.Series(i, 0), b.Series(k, 0)) && s.Label(i, 783) == b.Label(k, 783)
				})
				if k < 0 {
					t.Fatalf("sampled image %d is not one of the set's images with its label", i)
				}
			}
		})
	}
}

// TestFashionMNIST reads the real test set when the Debian package dataset-fashion-mnist is installed.
func TestFashionMNIST(t *testing.T) {
	task := PixelMNIST{Fashion: true}
	images, labels := task.Files()
	if _, err := os.Stat(images); err != nil {
		t.Skipf("no %s: %v", images, err)
	}
	img, err := ReadIDX(images)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{10000, 28, 28}; !reflect.DeepEqual(img.Dims, want) {
		t.Errorf("%s: dims %v, want %v", images, img.Dims, want)
	}
	lab, err := ReadIDX(labels)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 256)
	for _, c := range lab.Data {
		counts[c]++
	}
	if len(lab.Dims) != 1 || lab.Dims[0] != 10000 || slices.ContainsFunc(counts[10:], func(n int) bool { return n > 0 }) {
		t.Errorf("%s: dims %v, class counts %v, want [10000] and labels in 0..9", labels, lab.Dims, counts[:10])
	}
	// Memoryless check: the entropy of the class marginal is the best constant predictor's loss.
	h := 0.0
	for _, n := range counts[:10] {
		if n > 0 {
			p := float64(n) / 10000
			h -= p * math.Log(p)
		}
	}
	if want := task.Baseline(); math.Abs(h-want) > 0.02*want {
		t.Errorf("class-marginal entropy = %.4f, want Baseline() = ln 10 = %.4f ± 2%%", h, want)
	}
	b, err := task.Sample(newRNG(1), 16)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(b.X, func(v float32) bool { return v < 0 || v > 1 }); i >= 0 {
		t.Errorf("X[%d] = %g, want pixels in [0, 1]", i, b.X[i])
	}
}

// TestMNIST reads MNIST from its Go module (always there: go.mod pins it): 60 000 training and
// 10 000 test images of 28×28, the first training labels 5 0 4 1 9.
func TestMNIST(t *testing.T) {
	dir, err := MNISTModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		train bool
		n     int
	}{{true, 60000}, {false, 10000}} {
		ds, err := PixelMNIST{Train: tc.train}.Load()
		if err != nil {
			t.Fatal(err)
		}
		if ds.N != tc.n {
			t.Errorf("%s: %d images (train %v), want %d", dir, ds.N, tc.train, tc.n)
		}
		if tc.train && !slices.Equal(ds.Labels[:5], []byte{5, 0, 4, 1, 9}) {
			t.Errorf("first training labels %v, want 5 0 4 1 9", ds.Labels[:5])
		}
	}
	if s := (PixelMNIST{Train: true, Permuted: true, Seed: 1}).String(); s != "PixelMNIST(MNIST train, permuted seed=1)" {
		t.Errorf("String() = %q", s)
	}
	if s := (PixelMNIST{Fashion: true}).String(); s != "PixelMNIST(Fashion-MNIST test)" {
		t.Errorf("String() = %q", s)
	}
}
