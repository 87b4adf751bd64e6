(function(){'use strict';
function key(c){if(!c)return null;var v=c.getAttribute('data-v');
 if(v!==null){if(v==='')return null;var n=Number(v);return isNaN(n)?v.toLowerCase():n;}
 var t=c.textContent.trim();if(t===''||t==='\u2014')return null;
 var n=Number(t);return t!==''&&!isNaN(n)?n:t.toLowerCase();}
function cmp(a,b){if(typeof a==='number'&&typeof b==='number')return a-b;
 if(typeof a==='number')return -1;if(typeof b==='number')return 1;return a<b?-1:a>b?1:0;}
function head(t){return t.tHead.rows[t.tHead.rows.length-1].cells;}
function sortBy(t,col,dir){var tb=t.tBodies[0],rows=Array.prototype.slice.call(tb.rows);
 var k=rows.map(function(r,i){return{r:r,i:i,v:key(r.cells[col])};});
 k.sort(function(a,b){if(a.v===null||b.v===null)return((a.v===null)-(b.v===null))||a.i-b.i;
  return dir*cmp(a.v,b.v)||a.i-b.i;});
 var f=document.createDocumentFragment();k.forEach(function(x){f.appendChild(x.r);});tb.appendChild(f);
 var hs=head(t);for(var i=0;i<hs.length;i++)hs[i].removeAttribute('aria-sort');
 hs[col].setAttribute('aria-sort',dir>0?'ascending':'descending');
 t.setAttribute('data-sorted',col+':'+(dir>0?'asc':'desc'));}
function filter(t,q,out){q=q.trim().toLowerCase();var rows=t.tBodies[0].rows,shown=0;
 for(var i=0;i<rows.length;i++){var hit=!q||rows[i].textContent.toLowerCase().indexOf(q)>=0;
  rows[i].hidden=!hit;if(hit)shown++;}
 out.textContent=shown+' of '+rows.length+' rows';}
var boxes={};
Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){
 if(!t.tHead||!t.tBodies.length)return;
 Array.prototype.forEach.call(head(t),function(th,col){th.tabIndex=0;th.classList.add('sk');
  function go(){sortBy(t,col,th.getAttribute('aria-sort')==='ascending'?-1:1);}
  th.addEventListener('click',go);
  th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();go();}});});
 var box=document.createElement('div');box.className='filter';
 var inp=document.createElement('input');inp.type='search';inp.placeholder='filter rows';
 inp.setAttribute('aria-label','filter the rows of this table');
 var out=document.createElement('span');box.appendChild(inp);box.appendChild(out);
 t.parentNode.insertBefore(box,t);
 inp.addEventListener('input',function(){filter(t,inp.value,out);});
 if(t.id)boxes[t.id]={t:t,inp:inp,out:out};});
function fromHash(scroll){location.hash.replace(/^#/,'').split('&').forEach(function(p){var m;
 try{p=decodeURIComponent(p);}catch(e){return;}
 if((m=/^sort=([A-Za-z0-9_-]+):([0-9]+):(asc|desc)$/.exec(p))&&boxes[m[1]]){
  var t=boxes[m[1]].t;if(+m[2]<head(t).length)sortBy(t,+m[2],m[3]==='asc'?1:-1);}
 else if((m=/^filter=([A-Za-z0-9_-]+):([^]*)$/.exec(p))&&boxes[m[1]]){
  var b=boxes[m[1]];b.inp.value=m[2];filter(b.t,m[2],b.out);if(scroll)b.inp.scrollIntoView();}});}
fromHash(false);window.addEventListener('hashchange',function(){fromHash(true);});
document.documentElement.setAttribute('data-js','ready');
})();
