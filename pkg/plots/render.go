package plots

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	imgdraw "image/draw"
	"image/png"
	"math"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PNGScale is the number of PNG pixels per figure pixel: a 720×380 chart is a 1440×760 PNG,
// crisp on high-density screens; the notebook shows it at 720×380.
const PNGScale = 2

// A figure pixel is one vg point, so the SVG (whose user unit is the pixel) and a PNG at
// 72·PNGScale dots per inch come from the same drawing.
const pngDPI = 72 * PNGScale

// target is one rendering of a figure: the canvas, and for PNG the image it draws to (so
// that heat-map cells can be painted pixel-exact) with its height in figure pixels.
type target struct {
	dc  draw.Canvas
	img imgdraw.Image // nil for SVG
	h   float64
}

// renderPNG draws a w×h figure with drawFn and encodes it as PNG.
func renderPNG(w, h float64, drawFn func(target)) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w), vg.Length(h)), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	drawFn(target{dc: draw.New(c), img: c.Image(), h: h})
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	if err := enc.Encode(&b, c.Image()); err != nil {
		return nil, fmt.Errorf("plots: encoding PNG: %w", err)
	}
	return b.Bytes(), nil
}

// renderSVG draws a w×h figure with drawFn and returns it as SVG whose width and height are
// in pixels (vgsvg writes points, which a browser would show a third larger).
func renderSVG(w, h float64, drawFn func(target)) string {
	c := vgsvg.New(vg.Length(w), vg.Length(h))
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	drawFn(target{dc: dc, h: h})
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	s := b.String()
	s = strings.Replace(s, fmt.Sprintf(`width="%.*gpt" height="%.*gpt"`, 5, w, 5, h), fmt.Sprintf(`width="%.*g" height="%.*g"`, 5, w, 5, h), 1)
	// Fonts are not embedded (that would add hundreds of KB): fall back to the metric-
	// compatible Arial where Liberation Sans is not installed.
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:Liberation Sans,Arial,Helvetica,sans-serif;")
	// Embedded cell images: PNG (vgsvg labels them JPEG), shown with sharp cell edges.
	s = strings.ReplaceAll(s, "<image ", `<image style="image-rendering:pixelated" `)
	s = strings.ReplaceAll(s, "data:image/jpg;base64,", "data:image/png;base64,")
	return s
}

// Text styles: 11-pixel labels, 10-pixel tick labels, a 13-pixel bold title.
func textStyle(size float64, bold bool) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Length(size)}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: color.Black, Font: f, Handler: plot.DefaultTextHandler}
}

var (
	titleStyle = textStyle(13, true)
	labelStyle = textStyle(11, false)
	tickStyle  = textStyle(10, false)
	annotStyle = textStyle(10, false)
)

// textWidth is the width of txt in pixels.
func textWidth(sty text.Style, txt string) float64 { return float64(sty.Width(txt)) }

// wrap breaks txt at spaces into lines no wider than width (a single word may be wider).
func wrap(sty text.Style, txt string, width float64) string {
	if txt == "" || textWidth(sty, txt) <= width {
		return txt
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(txt) {
		if line != "" && textWidth(sty, line+" "+w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// fit shortens txt with an ellipsis until it is at most width wide.
func fit(sty text.Style, txt string, width float64) string {
	if textWidth(sty, txt) <= width {
		return txt
	}
	r := []rune(txt)
	for len(r) > 1 && textWidth(sty, string(r)+"…") > width {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// parseColor reads "#rrggbb" or "#rgb"; anything else is black.
func parseColor(s string) color.NRGBA {
	s = strings.TrimPrefix(s, "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if len(s) != 6 || err != nil {
		return color.NRGBA{A: 255}
	}
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// pixelRect converts a rectangle in figure pixels (y up, as vg draws) to PNG pixels (y down).
func (t target) pixelRect(x0, y0, x1, y1 float64) image.Rectangle {
	s := float64(PNGScale)
	return image.Rect(int(math.Round(x0*s)), int(math.Round((t.h-y1)*s)), int(math.Round(x1*s)), int(math.Round((t.h-y0)*s)))
}

// rect is an axis-aligned rectangle in figure pixels, y pointing down (as in the PNG, scaled
// by PNGScale): what the layout functions return.
type rect struct{ X0, Y0, X1, Y1 float64 }

// vgRect returns r of a figure of height h in vg coordinates (y up).
func (r rect) vgRect(h float64) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: vg.Length(r.X0), Y: vg.Length(h - r.Y1)}, Max: vg.Point{X: vg.Length(r.X1), Y: vg.Length(h - r.Y0)}}
}

func fromVG(v vg.Rectangle, h float64) rect {
	return rect{float64(v.Min.X), h - float64(v.Max.Y), float64(v.Max.X), h - float64(v.Min.Y)}
}

func rectPath(x0, y0, x1, y1 vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: x0, Y: y0})
	p.Line(vg.Point{X: x1, Y: y0})
	p.Line(vg.Point{X: x1, Y: y1})
	p.Line(vg.Point{X: x0, Y: y1})
	p.Close()
	return p
}
