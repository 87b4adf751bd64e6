/*
 * report_assets.h - the report's one stylesheet and one script (internal
 * to reports/html.c).  Both are allowed by their SHA-256 in the page's
 * Content-Security-Policy, so any other style or script is refused.
 *
 * The script only reorders and hides existing rows: it reads the DOM and
 * data-v attributes (numbers written by gpuvet), never builds markup from
 * strings.  "#sort=TABLE:COL:asc|desc" and "#filter=TABLE:TEXT" in the URL
 * (joined by '&') are applied on load.
 */
#ifndef GPUVET_REPORT_ASSETS_H
#define GPUVET_REPORT_ASSETS_H

static const char REPORT_CSS[] =
	":root{color-scheme:light}\n"
	"body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#1d1d1f;background:#fff}\n"
	"header{background:#16324f;color:#fff;padding:14px 24px}\n"
	"header h1{margin:0;font-size:22px}header p{margin:4px 0 0;color:#d8e2ec}\n"
	"header h1.good{color:#b9f3c6}header h1.warn{color:#ffe08a}header h1.bad{color:#ffb8b8}\n"
	"nav{padding:6px 24px;background:#eef2f6;position:sticky;top:0;z-index:1;border-bottom:1px solid #d0d7de}\n"
	"nav a{margin-right:14px;color:#16324f}\n"
	"main{padding:0 24px 40px;max-width:1400px;box-sizing:border-box}\n"
	"section{margin-top:26px}\n"
	"h2{font-size:18px;border-bottom:2px solid #16324f;padding-bottom:4px}\n"
	"h3{font-size:15px;margin:18px 0 6px}h4{font-size:14px;margin:12px 0 4px}\n"
	"table{border-collapse:collapse;margin:4px 0 12px;font-size:13px}\n"
	"th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}\n"
	"td{overflow-wrap:break-word}th{overflow-wrap:normal}\n"
	"th{background:#f3f5f8;font-weight:600}th small{font-weight:400;color:#555}\n"
	"td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}\n"
	".scroll{overflow-x:auto}#rank,#runlist{font-size:12.5px}#rank td,#rank th,#runlist td,#runlist th{padding:3px 5px}#rank th small{white-space:nowrap}\n"
	"#show-est:not(:checked)~.scroll tr.est{display:none}.toggle-l{margin-left:4px;color:#16324f}\n"
	".sk{cursor:pointer}th[aria-sort=ascending]::after{content:\" \\25B2\"}th[aria-sort=descending]::after{content:\" \\25BC\"}\n"
	".filter{margin:8px 0 2px}.filter input{font:inherit;padding:2px 6px;width:280px}.filter span{margin-left:8px;color:#555}\n"
	".cards{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0}\n"
	".card{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:140px}\n"
	".card b{display:block;font-size:22px}\n"
	".badge{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;font-weight:600;border:1px solid;white-space:nowrap}\n"
	".accept{color:#116329;border-color:#116329;background:#e6f4ea}\n"
	".reject{color:#a40e26;border-color:#a40e26;background:#fde8ea}\n"
	".unmeasurable,.incomplete{color:#7d4e00;border-color:#7d4e00;background:#fff4ce}\n"
	".critical{color:#a40e26;font-weight:600}.warning{color:#7d4e00}.info{color:#555}\n"
	".est{color:#555;font-style:italic}\n"
	"#answer{margin-top:14px}.health{border-left:4px solid #d0d7de;padding:2px 0 2px 14px;margin:8px 0 14px}\n"
	".health p{margin:4px 0}.facts,.flaglist{margin:6px 0;padding-left:20px}.facts li,.flaglist li{margin:3px 0}\n"
	".todo{color:#16324f}.ev .kv{display:inline-block;margin-right:10px}\n"
	"svg.chart{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif;margin:8px 0}\n"
	"svg .ct{font-weight:600;font-size:13px}\n"
	".charts{display:flex;flex-wrap:wrap;gap:4px 20px}\n"
	"details{margin:6px 0}summary{cursor:pointer}\n"
	".muted{color:#666}\n"
	"code,pre{font:12px ui-monospace,Menlo,Consolas,monospace}pre{white-space:pre-wrap;word-break:break-all;margin:0}\n"
	".demo{background:#fff4ce;border:1px solid #e3b341;padding:6px 10px;margin-top:12px}\n"
	".run{border-top:1px solid #d0d7de;margin-top:22px}\n"
	"@media print{nav,.filter{display:none}}\n";

static const char REPORT_JS[] =
	"(function(){'use strict';\n"
	"function key(c){if(!c)return null;var v=c.getAttribute('data-v');\n"
	" if(v!==null){if(v==='')return null;var n=Number(v);return isNaN(n)?v.toLowerCase():n;}\n"
	" var t=c.textContent.trim();if(t===''||t==='\\u2014')return null;\n"
	" var n=Number(t);return t!==''&&!isNaN(n)?n:t.toLowerCase();}\n"
	"function cmp(a,b){if(typeof a==='number'&&typeof b==='number')return a-b;\n"
	" if(typeof a==='number')return -1;if(typeof b==='number')return 1;return a<b?-1:a>b?1:0;}\n"
	"function head(t){return t.tHead.rows[t.tHead.rows.length-1].cells;}\n"
	"function sortBy(t,col,dir){var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows);\n"
	" var k=rows.map(function(r,i){return{r:r,i:i,v:key(r.cells[col])};});\n"
	" k.sort(function(a,b){if(a.v===null||b.v===null)return((a.v===null)-(b.v===null))||a.i-b.i;\n"
	"  return dir*cmp(a.v,b.v)||a.i-b.i;});\n"
	" var f=document.createDocumentFragment();k.forEach(function(x){f.appendChild(x.r);});tb.appendChild(f);\n"
	" var hs=head(t);for(var i=0;i<hs.length;i++)hs[i].removeAttribute('aria-sort');\n"
	" hs[col].setAttribute('aria-sort',dir>0?'ascending':'descending');\n"
	" t.setAttribute('data-sorted',col+':'+(dir>0?'asc':'desc'));}\n"
	"function filter(t,q,out){q=q.trim().toLowerCase();var rows=t.tBodies[0].rows,shown=0;\n"
	" for(var i=0;i<rows.length;i++){var hit=!q||rows[i].textContent.toLowerCase().indexOf(q)>=0;\n"
	"  rows[i].hidden=!hit;if(hit)shown++;}\n"
	" out.textContent=shown+' of '+rows.length+' rows';}\n"
	"var boxes={};\n"
	"Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){\n"
	" if(!t.tHead||!t.tBodies.length)return;\n"
	" Array.prototype.forEach.call(head(t),function(th,col){th.tabIndex=0;th.classList.add('sk');\n"
	"  function go(){sortBy(t,col,th.getAttribute('aria-sort')==='ascending'?-1:1);}\n"
	"  th.addEventListener('click',go);\n"
	"  th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();go();}});});\n"
	" var box=document.createElement('div');box.className='filter';\n"
	" var inp=document.createElement('input');inp.type='search';inp.placeholder='filter rows';\n"
	" inp.setAttribute('aria-label','filter the rows of this table');\n"
	" var out=document.createElement('span');box.appendChild(inp);box.appendChild(out);\n"
	" t.parentNode.insertBefore(box,t);\n"
	" inp.addEventListener('input',function(){filter(t,inp.value,out);});\n"
	" if(t.id)boxes[t.id]={t:t,inp:inp,out:out};});\n"
	"location.hash.replace(/^#/,'').split('&').forEach(function(p){var m;\n"
	" try{p=decodeURIComponent(p);}catch(e){return;}\n"
	" if((m=/^sort=([A-Za-z0-9_-]+):([0-9]+):(asc|desc)$/.exec(p))&&boxes[m[1]]){\n"
	"  var t=boxes[m[1]].t;if(+m[2]<head(t).length)sortBy(t,+m[2],m[3]==='asc'?1:-1);}\n"
	" else if((m=/^filter=([A-Za-z0-9_-]+):([^]*)$/.exec(p))&&boxes[m[1]]){\n"
	"  var b=boxes[m[1]];b.inp.value=m[2];filter(b.t,m[2],b.out);}});\n"
	"document.documentElement.setAttribute('data-js','ready');\n"
	"})();\n";

#endif
