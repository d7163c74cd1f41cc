package htmlpage

import "html/template"

// tmpl is the page. It names nothing outside itself: the style is inline,
// there is no script, and its only links are relative ones to the results
// folder's own files.
var tmpl = template.Must(template.New(FileName).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}: {{.Verdict}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #1f2328; background: #fff; }
h1 { font-size: 1.4em; margin: 0 0 .4em; }
h2 { font-size: 1.15em; margin: 1.4em 0 .5em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1em; margin: 1em 0 .3em; }
table { border-collapse: collapse; font-size: .9em; }
th, td { border: 1px solid #d0d7de; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
pre { background: #0d1117; color: #e6edf3; padding: .6em .8em; overflow-x: auto; font-size: .85em; white-space: pre-wrap; word-break: break-all; }
.verdict { display: inline-block; padding: .15em .6em; border-radius: 1em; font-weight: bold; }
.passed { background: #dafbe1; color: #116329; }
.failed { background: #ffebe9; color: #a40e26; }
.not-run { background: #fff8c5; color: #7d4e00; }
.cancelled { background: #eaeef2; color: #424a53; }
.would-run { background: #ddf4ff; color: #0a3069; }
.quiet { color: #6e7781; }
svg .passed { fill: #dafbe1; } svg .failed { fill: #ffebe9; } svg .not-run { fill: #fff8c5; }
svg .cancelled { fill: #eaeef2; } svg .would-run { fill: #ddf4ff; } svg .quiet { fill: #f6f8fa; }
svg rect { stroke: #57606a; } svg text { font-size: 12px; fill: #1f2328; } svg line { stroke: #8c959f; }
#timeline rect { stroke-width: .5; } #timeline text { font-size: 11px; } #timeline .bound { stroke: #a40e26; stroke-dasharray: 4 3; }
</style>
</head>
<body>
<main id="miles-ci-report" data-verdict="{{.Class}}">
<h1>{{.Title}} <span class="verdict {{.Class}}" id="verdict">{{.Verdict}}</span></h1>
{{- if .Tally}}
<p id="tally">{{.Tally}}</p>
{{- end}}
{{- if .Facts}}
<h2>The run</h2>
<table id="facts">
{{- range .Facts}}
<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- if .Hosts}}
<h2>Hosts</h2>
<table id="hosts">
{{- range .Hosts}}
<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- with .Notes}}
<ul id="notes">
{{- range .}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Reuse}}
<p>{{.Reuse}}</p>
{{- end}}
{{- if .Failures}}
<h2>{{or .FailedHead "Failed shards"}}</h2>
{{- range .Failures}}
<section class="failure">
<h3>{{.Title}}</h3>
<p>{{if .Dir}}folder <code>{{.Dir}}</code>, {{end}}its log: <a href="{{.Log}}">{{.Log}}</a></p>
{{- if .None}}
<p>{{if .Why}}The shard failed, but {{.Why}}{{else}}No file failed; the run was inconsistent (its summary.json says how){{end}}.</p>
{{- end}}
{{- range .Files}}
<p><code>{{.File}}</code> <span class="verdict failed">{{.Status}}</span>, its last lines:</p>
<pre class="tail">{{.Tail}}</pre>
{{- end}}
{{- if .NotRun}}
<p>Never started, as {{.NotRunWhy}}:</p>
<ul class="notrun">
{{- range .NotRun}}
<li><code>{{.}}</code></li>
{{- end}}
</ul>
{{- end}}
{{- if .Skipped}}
<p>Skipped by the plan:</p>
<ul class="skipped">
{{- range .Skipped}}
<li><code>{{index . 0}}</code>: {{index . 1}}</li>
{{- end}}
</ul>
{{- end}}
</section>
{{- end}}
{{- end}}
{{- with .Triage}}
<h2>Verdicts</h2>
<table id="verdicts">
<tr><th>file</th><th>verdict</th><th>head</th><th>base</th><th>attempts</th></tr>
{{- range .}}
<tr><td><code>{{.File}}</code></td><td><span class="verdict {{.Class}}">{{.Verdict}}</span>{{if .Why}}<br>{{.Why}}{{end}}</td><td>{{.Head}}</td><td>{{.Base}}</td>
<td><table>
{{- range .Attempts}}
<tr><td>{{.Name}}</td><td class="{{.Class}}">{{.Outcome}}</td><td>{{.Duration}}</td><td>{{if .Log}}<a href="{{.Log}}">run.log</a>{{end}}</td><td>{{.Reason}}</td></tr>
{{- end}}
</table></td></tr>
{{- end}}
</table>
{{- end}}
{{- with .Tests}}
<h2>Test files</h2>
<table id="tests">
<tr><th>file</th><th>status</th><th>attempts</th><th>time</th><th>est_time</th></tr>
{{- range .}}
<tr><td><code>{{.File}}</code></td><td class="{{.Class}}">{{.Status}}</td><td>{{.Attempts}}</td><td>{{.Elapsed}}</td><td>{{.EstTime}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- with .Gate}}
<h2>Metric gate</h2>
<p id="gate-facts">{{.Facts}}</p>
{{- if .Error}}
<p>{{.Error}}</p>
{{- end}}
{{- with .Rows}}
<table id="gate">
<tr><th>file</th><th>verdict</th><th>metric</th><th>step</th><th>status</th><th>value</th><th>mean (n)</th><th>band</th><th>reason</th><th>record</th></tr>
{{- range .}}
<tr><td>{{if .File}}<code>{{.File}}</code>{{end}}</td><td>{{if .Verdict}}<span class="verdict {{.VerdictClass}}">{{.Verdict}}</span>{{end}}</td><td>{{if .Metric}}<code>{{.Metric}}</code>{{end}}</td><td>{{.Step}}</td><td class="{{.Class}}">{{.Status}}</td><td>{{.Value}}</td><td>{{.Mean}}</td><td>{{.Band}}</td><td>{{.Reason}}</td><td>{{if .Record}}<a href="{{.Record}}">record</a>{{end}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- end}}
{{- with .Graph}}
<h2>The job graph</h2>
<svg id="graph" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="the job graph">
{{- range .Edges}}
<line x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}"/>
{{- end}}
{{- range .Boxes}}
<g><rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="230" height="40" rx="4"/><text x="{{.TextX}}" y="{{.TextY}}">{{.Label}}</text><text x="{{.TextX}}" y="{{.StateY}}">{{.State}}</text></g>
{{- end}}
</svg>
{{- end}}
{{- with .Timeline}}
<h2>Where the time went</h2>
<p id="timeline-figures">{{.Figures}}</p>
<svg id="timeline" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="the timeline: each shard on its host and devices">
{{- range .Ticks}}
<line x1="{{.X}}" y1="18" x2="{{.X}}" y2="{{.Y}}"/><text x="{{.X}}" y="12">{{.Label}}</text>
{{- end}}
{{- range .Lanes}}
<g class="lane"><text x="4" y="{{.TextY}}">{{.Label}}</text>
{{- range .Bars}}
<g class="bar"><title>{{.Title}}</title><rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"/>{{if .Label}}<text x="{{.TextX}}" y="{{.TextY}}">{{.Label}}</text>{{end}}</g>
{{- end}}
</g>
{{- end}}
{{- if .BoundX}}
<line class="bound" x1="{{.BoundX}}" y1="18" x2="{{.BoundX}}" y2="{{.BoundY2}}"/>
{{- end}}
</svg>
{{- end}}
{{- if .Jobs}}
<h2>Jobs</h2>
<table id="jobs">
<tr><th>job</th><th>state</th><th>needs</th><th>where</th><th>duration</th><th>attempt</th><th>results</th><th>why</th></tr>
{{- range .Jobs}}
<tr><td>{{.Title}}</td><td class="{{.Class}}">{{.State}}</td><td>{{.Needs}}</td><td>{{.Where}}</td><td>{{.Duration}}</td><td>{{.Attempt}}</td><td>{{if .Log}}<a href="{{.Log}}">{{.Dir}}/run.log</a>{{end}}</td><td>{{.Reason}}</td></tr>
{{- end}}
</table>
{{- end}}
</main>
</body>
</html>
`))
