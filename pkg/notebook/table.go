package notebook

import (
	"fmt"
	"html"
	"strings"

	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// ShowTable displays Markdown text made of pipe tables (such as runs.Summary's) and lines of
// text as HTML: each table as an HTML table, each other non-empty line as a paragraph, with the
// Markdown itself as the text/plain part. A notebook opened unrun is not trusted, and Jupyter
// then shows no output area for a text/markdown display at all; it does show text/html,
// sanitised, and a table survives that. Outside a notebook ShowTable prints the Markdown.
func ShowTable(markdown string) {
	if !gonbui.IsNotebook {
		fmt.Print(markdown)
		return
	}
	gonbui.SendData(&protocol.DisplayData{Data: map[protocol.MIMEType]any{
		protocol.MIMETextHTML: tableHTML(markdown), protocol.MIMETextPlain: markdown}})
	gonbui.Sync()
}

// tableHTML converts Markdown pipe tables and lines of text to HTML: a block of lines starting
// with "|" is a table whose first row is the header and whose "|---|" row is left out; every
// other non-empty line is a paragraph. All text is escaped.
func tableHTML(markdown string) string {
	var b strings.Builder
	lines := strings.Split(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case line == "":
		case strings.HasPrefix(line, "|"):
			b.WriteString("<table>\n")
			row := 0
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				cells := cellsOf(strings.TrimSpace(lines[i]))
				if row == 1 && separator(cells) {
					continue
				}
				tag := "td"
				if row == 0 {
					tag = "th"
					b.WriteString("<thead>")
				} else if row == 1 {
					b.WriteString("<tbody>")
				}
				b.WriteString("<tr>")
				for _, c := range cells {
					fmt.Fprintf(&b, "<%s>%s</%s>", tag, html.EscapeString(c), tag)
				}
				b.WriteString("</tr>")
				if row == 0 {
					b.WriteString("</thead>")
				}
				b.WriteString("\n")
				row++
			}
			i--
			if row > 1 {
				b.WriteString("</tbody>")
			}
			b.WriteString("</table>\n")
		default:
			fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(line))
		}
	}
	return b.String()
}

// cellsOf splits a table row "| a | b |" into its trimmed cells.
func cellsOf(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	cells := strings.Split(row, "|")
	for k, c := range cells {
		cells[k] = strings.TrimSpace(c)
	}
	return cells
}

// separator reports whether cells are a table's header separator (---, :--, --:).
func separator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-:") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return len(cells) > 0
}
