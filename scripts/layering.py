#!/usr/bin/env python3
"""The import graph of src/: which source file uses an item defined in which other one.

A file A imports a file B when a `use` (not a `pub use` re-export) or an inline
`crate::...`, `super::...` or `child::...` path in A names an item that B defines; test
modules are left out. Prints every cycle and exits 1 if there is one: no two files may
import each other, directly or through others. tests/all/layering.rs runs it.

Usage: scripts/layering.py [SRC_DIR]
"""
import re,os,sys,glob
root=sys.argv[1] if len(sys.argv)>1 else 'src'
files={}
for p in glob.glob(root+'/**/*.rs',recursive=True):
    rel=os.path.relpath(p,root)
    mod=rel[:-3].split('/')
    if mod[-1]=='mod': mod=mod[:-1]
    if mod in (['lib'],['main']): mod=[]
    if rel=='main.rs': mod=['main']
    files[tuple(mod)]=p
def body(p):
    s=open(p).read()
    i=s.find('#[cfg(test)]\nmod ')
    s=s if i<0 else s[:i]
    s=re.sub(r'//[^\n]*','',s)
    # Re-exports (`pub use`, `pub(crate) use`) are a module's face, not an import of its own.
    s=re.sub(r'(?m)^\s*pub(?:\([a-z ]+\))?\s+use\s+[^;]*;','',s)
    s=re.sub(r'"(?:[^"\\]|\\.)*"','""',s)
    return s
texts={m:body(p) for m,p in files.items()}
DEF=r'^\s*(?:pub(?:\([a-z ]+\))?\s+)?(?:async\s+)?(?:struct|enum|trait|fn|type|const|static|union)\s+{}\b|macro_rules!\s*{}\b'
def defines(m,name):
    return re.search(DEF.format(re.escape(name),re.escape(name)), texts[m], re.M) is not None
def definer(modpath,name):
    # modpath resolves to a module file; find file defining name: itself or a descendant
    if defines(modpath,name): return modpath
    for m in files:
        if len(m)>len(modpath) and m[:len(modpath)]==modpath and defines(m,name): return m
    return modpath
def resolve(path):
    for n in range(len(path),0,-1):
        if tuple(path[:n]) in files:
            m=tuple(path[:n]); rest=path[n:]
            if rest and rest[0][:1].isupper() or (rest and rest[0] not in ('self',)):
                return definer(m,rest[0]) if rest else m
            return m
    return ()
def expand(tree):
    # expand a use tree string like a::{b, c::{d, e}} into lists
    out=[]
    def rec(prefix, s):
        s=s.strip()
        if not s: return
        # split top-level commas
        parts=[];depth=0;cur=''
        for ch in s:
            if ch=='{':depth+=1
            if ch=='}':depth-=1
            if ch==',' and depth==0: parts.append(cur);cur=''
            else: cur+=ch
        parts.append(cur)
        for part in parts:
            part=part.strip()
            if not part: continue
            if '{' in part:
                i=part.index('{'); head=part[:i].rstrip(':').strip()
                inner=part[i+1:part.rindex('}')]
                rec(prefix+[x for x in head.split('::') if x], inner)
            else:
                part=part.split(' as ')[0].strip()
                segs=[x for x in part.split('::') if x]
                if segs==['self']: out.append(prefix)
                elif segs!=['*']: out.append(prefix+segs)
    rec([], tree)
    return out
edges={}
for mod,p in files.items():
    if p.endswith('/tests.rs'): continue
    s=texts[mod]
    deps=set()
    ismod=p.endswith('mod.rs') or p.endswith('lib.rs')
    here=list(mod) if ismod else list(mod[:-1])
    for m in re.finditer(r'^\s*use\s+([^;]+);', s, re.M):
        for segs in expand(m.group(1)):
            if not segs: continue
            if segs[0]=='crate': path=segs[1:]
            elif segs[0]=='super':
                base=list(mod)
                while segs and segs[0]=='super': base=base[:-1]; segs=segs[1:]
                path=base+segs
            elif segs[0]=='self': path=list(mod)+segs[1:]
            elif tuple(list(mod)+[segs[0]]) in files: path=list(mod)+segs
            else: continue
            t=resolve(path)
            if t!=mod and t in files: deps.add(t)
    for m in re.finditer(r'(?<![A-Za-z_:])((?:crate|super)(?:::[a-z_][a-z0-9_]*)*)::([A-Za-z_][A-Za-z0-9_]*)', s):
        segs=m.group(1).split('::')+[m.group(2)]
        if segs[0]=='crate': segs=segs[1:]
        else:
            base=list(mod)
            while segs and segs[0]=='super': base=base[:-1]; segs=segs[1:]
            segs=base+segs
        t=resolve(segs)
        if t!=mod and t in files: deps.add(t)
    for m in re.finditer(r'(?<![A-Za-z0-9_:])([a-z_][a-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)', s):
        child=list(mod)+[m.group(1)]
        if tuple(child) in files and m.group(1) not in ('crate','super','self','std'):
            t=resolve(child+[m.group(2)])
            if t!=mod and t in files: deps.add(t)
    edges[mod]=deps
idx={};low={};st=[];on=set();sccs=[];c=[0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges.get(v,()):
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: sccs.append(comp)
for v in edges:
    if v not in idx: sc(v)
for comp in sccs:
    print('CYCLE:', ', '.join('/'.join(x) or 'lib' for x in comp))
    for a in comp:
        for b in sorted(edges[a]):
            if b in comp: print('   ', '/'.join(a) or 'lib', '->', '/'.join(b) or 'lib')
print(len(sccs), "cycles")
sys.exit(1 if sccs else 0)
