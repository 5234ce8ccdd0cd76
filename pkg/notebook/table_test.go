package notebook

import (
	"strings"
	"testing"
)

// TestTableHTML: a Markdown pipe table becomes an HTML table (header in <th>, no separator row,
// text escaped), and the lines around it paragraphs.
func TestTableHTML(t *testing.T) {
	md := "| run | final held-out loss |\n|---|---:|\n| a<b (8 seeds) | 0.0030 [0.0023–0.0065] |\n| c | – |\n\nstub: 2 steps, too few to draw\n"
	got := tableHTML(md)
	want := "<table>\n<thead><tr><th>run</th><th>final held-out loss</th></tr></thead>\n" +
		"<tbody><tr><td>a&lt;b (8 seeds)</td><td>0.0030 [0.0023–0.0065]</td></tr>\n<tr><td>c</td><td>–</td></tr>\n</tbody></table>\n" +
		"<p>stub: 2 steps, too few to draw</p>\n"
	if got != want {
		t.Errorf("tableHTML:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "---") || strings.Contains(got, "|") {
		t.Errorf("Markdown left in the HTML: %s", got)
	}
	if got := tableHTML("only a line"); got != "<p>only a line</p>\n" {
		t.Errorf("a line: %q", got)
	}
}
