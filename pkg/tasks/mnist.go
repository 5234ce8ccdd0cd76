package tasks

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
)

// IDX is the content of an IDX file of unsigned bytes (type code 0x08), the format of MNIST and
// Fashion-MNIST: a big-endian header 0x00 0x00 0x08 ndim, ndim uint32 dimensions, then the data in
// row-major order. Images files have Dims [N, rows, cols] and label files [N].
type IDX struct {
	Dims []int
	Data []byte
}

// MaxIDXBytes bounds the data size an IDX header may announce (the MNIST training images are 47 MB).
const MaxIDXBytes = 1 << 30

// DecodeIDX reads an IDX file of unsigned bytes from r, gzip-compressed or not (detected by the gzip
// magic bytes 0x1f 0x8b). It returns an error for another type code, a truncated file or trailing data.
func DecodeIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	var head [4]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return nil, fmt.Errorf("IDX header: %w", err)
	}
	if head[0] != 0 || head[1] != 0 {
		return nil, fmt.Errorf("IDX magic % x, want 00 00 followed by type and rank", head)
	}
	if head[2] != 0x08 {
		return nil, fmt.Errorf("IDX type code 0x%02x, want 0x08 (unsigned byte)", head[2])
	}
	if head[3] == 0 {
		return nil, fmt.Errorf("IDX rank 0, want >= 1")
	}
	idx := &IDX{Dims: make([]int, head[3])}
	size := 1
	for d := range idx.Dims {
		var v uint32
		if err := binary.Read(br, binary.BigEndian, &v); err != nil {
			return nil, fmt.Errorf("IDX dimension %d: %w", d, err)
		}
		idx.Dims[d] = int(v)
		if v != 0 && size > MaxIDXBytes/int(v) {
			return nil, fmt.Errorf("IDX dimensions %v…: more than MaxIDXBytes = %d elements", idx.Dims[:d+1], MaxIDXBytes)
		}
		size *= int(v)
	}
	data, err := io.ReadAll(io.LimitReader(br, int64(size)+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("IDX data (%d bytes for dimensions %v): %w", size, idx.Dims, err)
	case len(data) < size:
		return nil, fmt.Errorf("IDX data truncated: %d bytes, want %d for dimensions %v", len(data), size, idx.Dims)
	case len(data) > size:
		return nil, fmt.Errorf("IDX has trailing data after %d bytes for dimensions %v", size, idx.Dims)
	}
	idx.Data = data
	return idx, nil
}

// ReadIDX reads the IDX file at path (gzip-compressed or not, see DecodeIDX). Errors name the file.
func ReadIDX(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	defer f.Close()
	idx, err := DecodeIDX(f)
	if err != nil {
		return nil, fmt.Errorf("tasks: reading %s: %w", path, err)
	}
	return idx, nil
}

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs Fashion-MNIST
// (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz).
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// Pixel-by-pixel MNIST sizes (Le et al. 2015; Arjovsky et al. 2016, §4.3: 784 steps of one pixel, 10 classes).
const (
	MNISTRows    = 28
	MNISTCols    = 28
	MNISTPixels  = MNISTRows * MNISTCols
	MNISTClasses = 10
)

// PixelMNIST is pixel-by-pixel (permuted) MNIST (Le et al. 2015; Arjovsky et al. 2016, §4.3, which is
// empty in our draft): one pixel per step, L = 784 steps in row-major order, x_t = image[π(t)]/255 ∈
// [0, 1] with π the identity, or when Permuted a fixed random permutation drawn from Seed. The class (0..9) is the target at the
// last step only (Mask 1 there; Labels elsewhere are 0); loss cross-entropy. Files are read once per
// process and cached. The zero value is the MNIST test set (MNISTModuleDir), unpermuted.
type PixelMNIST struct {
	Dir      string // directory with the four IDX files (.gz or plain); "" means MNISTModuleDir, or FashionMNISTDir with Fashion
	Fashion  bool   // Fashion-MNIST (Xiao et al. 2017; Debian's dataset-fashion-mnist) instead of MNIST
	Permuted bool   // permute the pixels with Permutation()
	Seed     uint64 // seed of the permutation, used when Permuted (0 is a valid seed)
	Train    bool   // the 60000-image training set instead of the 10000-image test set
}

// Files returns the paths of the images and labels files: train-* or t10k-*, "-idx3-ubyte" /
// "-idx1-ubyte" with ".gz" if that file exists, else without, else (missing) with ".gz".
func (p PixelMNIST) Files() (images, labels string) {
	dir, _ := p.dir()
	prefix := "t10k"
	if p.Train {
		prefix = "train"
	}
	find := func(name string) string {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path + ".gz"); err != nil {
			if _, err := os.Stat(path); err == nil {
				return path
			}
		}
		return path + ".gz"
	}
	return find(prefix + "-images-idx3-ubyte"), find(prefix + "-labels-idx1-ubyte")
}

// dir is the directory of the IDX files: Dir, or the dataset's own (the error is MNISTModuleDir's).
func (p PixelMNIST) dir() (string, error) {
	switch {
	case p.Dir != "":
		return p.Dir, nil
	case p.Fashion:
		return FashionMNISTDir, nil
	}
	return MNISTModuleDir()
}

// Validate checks that both files exist (Files); it does not read them (Load does).
func (p PixelMNIST) Validate() error {
	if _, err := p.dir(); err != nil {
		return err
	}
	images, labels := p.Files()
	for _, path := range []string{images, labels} {
		if _, err := os.Stat(path); err != nil {
			fix := "set Dir to a directory of MNIST IDX files"
			if p.Fashion && p.Dir == "" {
				fix = "install the Debian package dataset-fashion-mnist, or " + fix
			}
			return fmt.Errorf("tasks: PixelMNIST.Dir = %q: %s (nor without .gz) not found; %s", p.Dir, path, fix)
		}
	}
	return nil
}

// SeqLen returns 784.
func (p PixelMNIST) SeqLen() int { return MNISTPixels }

// NumInputs returns 1 (the pixel).
func (p PixelMNIST) NumInputs() int { return 1 }

// NumOutputs returns 10.
func (p PixelMNIST) NumOutputs() int { return MNISTClasses }

// Baseline returns ln 10 ≈ 2.303, the cross-entropy of the uniform guess over the 10 classes (the
// best constant predictor: both datasets are nearly class-balanced).
func (p PixelMNIST) Baseline() float64 { return math.Log(MNISTClasses) }

// Permutation returns π, the pixel order: rand.New(rand.NewPCG(Seed, 0)).Perm(784) when Permuted,
// the identity otherwise.
func (p PixelMNIST) Permutation() []int {
	if p.Permuted {
		return rand.New(rand.NewPCG(p.Seed, 0)).Perm(MNISTPixels)
	}
	perm := make([]int, MNISTPixels)
	for t := range perm {
		perm[t] = t
	}
	return perm
}

// Dataset holds a loaded image set: Pixels [N][28][28] and Labels [N] in 0..9. It is shared through
// the cache: do not modify it.
type Dataset struct {
	N      int
	Pixels []byte
	Labels []byte
}

var mnistCache struct {
	sync.Mutex
	sets map[string]*Dataset
}

// Load reads (once per process) and checks the images and labels files: N images of 28×28, N labels
// in 0..9. Errors name the file.
func (p PixelMNIST) Load() (*Dataset, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	images, labels := p.Files()
	mnistCache.Lock()
	defer mnistCache.Unlock()
	key := images + "\x00" + labels
	if ds := mnistCache.sets[key]; ds != nil {
		return ds, nil
	}
	img, err := ReadIDX(images)
	if err != nil {
		return nil, err
	}
	if len(img.Dims) != 3 || img.Dims[1] != MNISTRows || img.Dims[2] != MNISTCols {
		return nil, fmt.Errorf("tasks: %s: dimensions %v, want [N %d %d]", images, img.Dims, MNISTRows, MNISTCols)
	}
	lab, err := ReadIDX(labels)
	if err != nil {
		return nil, err
	}
	if len(lab.Dims) != 1 || lab.Dims[0] != img.Dims[0] {
		return nil, fmt.Errorf("tasks: %s: dimensions %v, want [%d] (one label per image of %s)", labels, lab.Dims, img.Dims[0], images)
	}
	for i, c := range lab.Data {
		if c >= MNISTClasses {
			return nil, fmt.Errorf("tasks: %s: label %d = %d, want 0..%d", labels, i, c, MNISTClasses-1)
		}
	}
	if img.Dims[0] == 0 {
		return nil, fmt.Errorf("tasks: %s: 0 images, want >= 1", images)
	}
	ds := &Dataset{N: img.Dims[0], Pixels: img.Data, Labels: lab.Data}
	if mnistCache.sets == nil {
		mnistCache.sets = make(map[string]*Dataset)
	}
	mnistCache.sets[key] = ds
	return ds, nil
}

// Sample draws batch images uniformly with replacement (index rng.IntN(N) each). It returns the
// error of Load, or an error if rng is nil or batch is out of range.
func (p PixelMNIST) Sample(rng *rand.Rand, batch int) (*Batch, error) {
	ds, err := p.Load()
	if err != nil {
		return nil, err
	}
	if err := checkRNG("PixelMNIST", rng); err != nil {
		return nil, err
	}
	b, err := newBatch("PixelMNIST", batch, MNISTPixels, 1, MNISTClasses)
	if err != nil {
		return nil, err
	}
	idx := make([]int, batch)
	for s := range idx {
		idx[s] = rng.IntN(ds.N)
	}
	p.fill(b, ds, idx)
	return b, nil
}

// Examples returns images start..start+n-1 in file order, for a deterministic pass over the set
// (e.g. test accuracy). It returns an error unless 0 <= start and 1 <= n <= N-start.
func (p PixelMNIST) Examples(start, n int) (*Batch, error) {
	ds, err := p.Load()
	if err != nil {
		return nil, err
	}
	if start < 0 || start >= ds.N {
		return nil, fmt.Errorf("tasks: PixelMNIST.Examples start = %d, want 0..%d", start, ds.N-1)
	}
	if n < 1 || n > ds.N-start {
		return nil, fmt.Errorf("tasks: PixelMNIST.Examples n = %d, want 1..%d (N - start)", n, ds.N-start)
	}
	b, err := newBatch("PixelMNIST", n, MNISTPixels, 1, MNISTClasses)
	if err != nil {
		return nil, err
	}
	idx := make([]int, n)
	for s := range idx {
		idx[s] = start + s
	}
	p.fill(b, ds, idx)
	return b, nil
}

func (p PixelMNIST) fill(b *Batch, ds *Dataset, idx []int) {
	perm := p.Permutation()
	for s, k := range idx {
		img := ds.Pixels[k*MNISTPixels : (k+1)*MNISTPixels]
		row := s * MNISTPixels
		for t, src := range perm {
			b.X[row+t] = float32(img[src]) / 255
		}
		b.Labels[row+MNISTPixels-1] = int32(ds.Labels[k])
		b.Mask[row+MNISTPixels-1] = 1
	}
}

// String returns e.g. "PixelMNIST(MNIST test)" or "PixelMNIST(Fashion-MNIST train, permuted
// seed=1)", with ", dir=…" when Dir is set.
func (p PixelMNIST) String() string {
	set := "MNIST test"
	if p.Fashion {
		set = "Fashion-MNIST test"
	}
	if p.Train {
		set = set[:len(set)-len("test")] + "train"
	}
	if p.Permuted {
		set += fmt.Sprintf(", permuted seed=%d", p.Seed)
	}
	if p.Dir != "" {
		set += ", dir=" + p.Dir
	}
	return "PixelMNIST(" + set + ")"
}
