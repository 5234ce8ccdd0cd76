// Package shuffle stores numbers byte-shuffled: the k-th bytes of all values side by side
// (the shuffle filter of HDF5 and Blosc), so that a general-purpose compressor such as gzip
// finds the long runs of equal sign and exponent bytes that interleaved values hide. Run
// logs and checkpoints store their float columns this way before gzip.
package shuffle

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Float is the element types Encode and Decode take.
type Float interface{ ~float32 | ~float64 }

// Encode appends v, little-endian and byte-shuffled, to dst: first byte 0 of every value,
// then byte 1 of every value, and so on.
func Encode[T Float](dst []byte, v []T) []byte {
	size := width[T]()
	start := len(dst)
	dst = append(dst, make([]byte, size*len(v))...)
	out := dst[start:]
	var buf [8]byte
	for i, x := range v {
		put(buf[:], x)
		for k := range size {
			out[k*len(v)+i] = buf[k]
		}
	}
	return dst
}

// Decode reads n values that Encode wrote from the start of src and returns them with the
// bytes that follow; the error says how many bytes were missing.
func Decode[T Float](src []byte, n int) ([]T, []byte, error) {
	size := width[T]()
	if n < 0 || len(src) < size*n {
		return nil, src, fmt.Errorf("shuffle: %d values of %d bytes need %d bytes, have %d", n, size, size*max(n, 0), len(src))
	}
	v := make([]T, n)
	var buf [8]byte
	for i := range v {
		for k := range size {
			buf[k] = src[k*n+i]
		}
		if size == 4 {
			v[i] = T(math.Float32frombits(binary.LittleEndian.Uint32(buf[:4])))
		} else {
			v[i] = T(math.Float64frombits(binary.LittleEndian.Uint64(buf[:8])))
		}
	}
	return v, src[size*n:], nil
}

// width is the size of a T in bytes: 4 or 8.
func width[T Float]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

func put[T Float](buf []byte, x T) {
	if width[T]() == 4 {
		binary.LittleEndian.PutUint32(buf, math.Float32bits(float32(x)))
	} else {
		binary.LittleEndian.PutUint64(buf, math.Float64bits(float64(x)))
	}
}
