package plots

import (
	"bytes"
	"fmt"
	"image"
	imgdraw "image/draw"
	"image/png"
	"strings"
)

// Grid lays figures out as one figure, Cols to a row (default 2), each in a cell as large as
// the largest figure of its column and row: a set of charts a reader compares side by side.
type Grid struct {
	Cols    int
	Figures []Figure
}

var _ Figure = Grid{}

// cols is Cols, or 2.
func (g Grid) cols() int {
	if g.Cols > 0 {
		return g.Cols
	}
	return 2
}

// DataPoints adds its figures' counts.
func (g Grid) DataPoints() int {
	n := 0
	for _, f := range g.Figures {
		n += f.DataPoints()
	}
	return n
}

// layout returns each figure's offset and the grid's size, in the units of sizes.
func (g Grid) layout(sizes [][2]int) (offsets [][2]int, w, h int) {
	cols := g.cols()
	rows := (len(sizes) + cols - 1) / cols
	colW, rowH := make([]int, cols), make([]int, rows)
	for i, s := range sizes {
		colW[i%cols], rowH[i/cols] = max(colW[i%cols], s[0]), max(rowH[i/cols], s[1])
	}
	for i := range sizes {
		x, y := 0, 0
		for c := range i % cols {
			x += colW[c]
		}
		for r := range i / cols {
			y += rowH[r]
		}
		offsets = append(offsets, [2]int{x, y})
	}
	for _, v := range colW {
		w += v
	}
	for _, v := range rowH {
		h += v
	}
	return offsets, w, h
}

// PNG draws every figure's PNG into its cell on white.
func (g Grid) PNG() ([]byte, error) {
	if len(g.Figures) == 0 {
		return nil, fmt.Errorf("plots: a Grid with no figures")
	}
	var imgs []image.Image
	var sizes [][2]int
	for i, f := range g.Figures {
		b, err := f.PNG()
		if err != nil {
			return nil, fmt.Errorf("plots: grid figure %d: %w", i, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("plots: grid figure %d: %w", i, err)
		}
		imgs, sizes = append(imgs, img), append(sizes, [2]int{img.Bounds().Dx(), img.Bounds().Dy()})
	}
	offsets, w, h := g.layout(sizes)
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	imgdraw.Draw(out, out.Bounds(), image.White, image.Point{}, imgdraw.Src)
	for i, img := range imgs {
		r := image.Rect(offsets[i][0], offsets[i][1], offsets[i][0]+sizes[i][0], offsets[i][1]+sizes[i][1])
		imgdraw.Draw(out, r, img, img.Bounds().Min, imgdraw.Src)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, out); err != nil {
		return nil, fmt.Errorf("plots: encoding PNG: %w", err)
	}
	return b.Bytes(), nil
}

// SVG nests every figure's SVG at its cell's offset (figure pixels, as the PNGs' sizes over
// PNGScale).
func (g Grid) SVG() string {
	var parts []string
	var sizes [][2]int
	for _, f := range g.Figures {
		s := f.SVG()
		if i := strings.Index(s, "<svg"); i >= 0 {
			s = s[i:] // the nested figure without its XML prolog
		}
		parts = append(parts, s)
		w, h := 0, 0
		if b, err := f.PNG(); err == nil {
			if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err == nil {
				w, h = cfg.Width/PNGScale, cfg.Height/PNGScale
			}
		}
		sizes = append(sizes, [2]int{w, h})
	}
	offsets, w, h := g.layout(sizes)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="%d" height="%d" viewBox="0 0 %d %d">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`, w, h)
	for i, s := range parts {
		b.WriteString(strings.Replace(s, "<svg", fmt.Sprintf(`<svg x="%d" y="%d"`, offsets[i][0], offsets[i][1]), 1))
	}
	b.WriteString("</svg>")
	return b.String()
}
