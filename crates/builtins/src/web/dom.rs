//! The DOM read_url converts, built from an untrusted page by html5ever into RcDom, and
//! reshaped so that no page can make the conversion run away:
//!
//! - html5ever's tree building is quadratic in the nesting (20,000 nested `<div>`s take
//!   1.8 s, a 5 MB page of them an hour), so [`Stop`] is checked at each element built;
//! - misnested formatting tags make html5ever re-open every one of them at each new
//!   paragraph (500 unclosed `<b>`s and 56 KB of `<p>`s built 740 MiB of elements), so the
//!   elements built are counted against a budget the page's size sets;
//! - htmd's walk recurses once a level (a few thousand levels overflow any stack and abort
//!   the program) and re-reads a quote's or a list's content once for each quote or list
//!   around it, so the tree is flattened below `MAX_DEPTH` and quotes and lists are
//!   dissolved below `MAX_NESTING`.

use std::any::Any;
use std::borrow::Cow;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeBuilderOpts, TreeSink};
use html5ever::{parse_document, Attribute, ExpandedName, ParseOpts, QualName};
use markup5ever_rcdom::{Handle, Node, NodeData, RcDom};

/// How deep the tree htmd walks may be, near enough: below this depth the page is
/// [`flatten`]ed. Real pages nest a few dozen levels; with [`KEEP_DEPTH`], htmd's recursive
/// walk takes at most 1.5 MiB of stack in a debug build (about 5 KiB a level) and 0.4 MiB in
/// a release build, within the 2 MiB of any thread.
pub(super) const MAX_DEPTH: usize = 256;

/// What [`flatten`] keeps whole: a subtree at most this deep (a paragraph with its links
/// and emphasis, a list, a table).
const KEEP_DEPTH: usize = 32;

/// How many quotes and lists may hold one another before the inner ones are [`dissolve`]d:
/// Markdown indents each, and htmd re-reads their content once a level.
pub(super) const MAX_NESTING: usize = 8;

/// The elements a page of `n` bytes may build: one a byte, more than any real page needs
/// (an element takes at least three bytes, `<p>`), up to half a million (about 100 MB of
/// DOM).
fn element_budget(bytes: usize) -> usize {
    bytes.saturating_add(10_000).min(500_000)
}

/// How much of the page html5ever takes at a time. Stop and the element budget are checked
/// at each element it builds, and between slices for pages that build few.
const SLICE_BYTES: usize = 16 << 10;

/// Set from another thread to end a conversion early (read_url's timeout, an interrupted
/// turn): it is checked between slices of the page.
#[derive(Debug, Default)]
pub struct Stop(AtomicBool);

impl Stop {
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why a page was not converted.
#[derive(Debug, PartialEq)]
pub enum Unconverted {
    /// [`Stop`] was set.
    Stopped,
    /// The page built more elements than its size explains.
    TooManyElements { bytes: usize, budget: usize },
}

impl std::fmt::Display for Unconverted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unconverted::Stopped => write!(f, "the conversion was stopped"),
            Unconverted::TooManyElements { bytes, budget } => write!(
                f,
                "its {bytes} bytes of HTML build more than {budget} elements (misnested \
                 formatting tags), more than any page needs; it was not converted"
            ),
        }
    }
}

/// The page's DOM, as a browser builds it (scripting off, so `<noscript>` holds markup and
/// is dropped like the rest).
pub(super) fn parse(html: &str, stop: &Stop) -> Result<Handle, Unconverted> {
    let options = ParseOpts {
        tree_builder: TreeBuilderOpts {
            scripting_enabled: false,
            ..TreeBuilderOpts::default()
        },
        ..ParseOpts::default()
    };
    let budget = element_budget(html.len());
    let sink = Counted {
        dom: RcDom::default(),
        elements: Cell::new(0),
        budget,
        stop,
    };
    let mut parser = parse_document(sink, options);
    // The sink unwinds out of html5ever to end the parse early (see `Halt`).
    let halted = |payload: Box<dyn Any + Send>| match payload.downcast::<Halt>() {
        Ok(_) if stop.is_set() => Unconverted::Stopped,
        Ok(_) => Unconverted::TooManyElements {
            bytes: html.len(),
            budget,
        },
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let mut rest = html;
    while !rest.is_empty() {
        if stop.is_set() {
            return Err(Unconverted::Stopped);
        }
        let mut end = rest.len().min(SLICE_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let slice = StrTendril::from_slice(&rest[..end]);
        catch_unwind(AssertUnwindSafe(|| parser.process(slice))).map_err(halted)?;
        rest = &rest[end..];
    }
    let dom = catch_unwind(AssertUnwindSafe(|| parser.finish())).map_err(halted)?;
    Ok(dom.document)
}

/// What [`Counted`] unwinds with to end a parse: html5ever's sink has no other way to stop
/// the parser in the middle of a slice, and a misnested page can build millions of elements
/// from one. `resume_unwind` runs no panic hook, so nothing is printed; the parser is
/// dropped, never used again. (Panics unwind in every build of agent-loop: its Drop guards
/// rely on it too.)
struct Halt;

/// Makes `node`'s descendants its children, in document order, until none of them is more
/// than [`KEEP_DEPTH`] deep: each descendant whose subtree is deeper gives way to its
/// children. The text stays, in its order; the nesting, and the elements that held it, go.
pub(super) fn flatten(node: &Handle) {
    // The subtree in document order, each node with its parent's place in it (a parent
    // comes before its children), walked without recursion.
    let mut order: Vec<(Handle, Option<usize>)> = Vec::new();
    let children = node.children.borrow();
    let mut pending: Vec<_> = children.iter().rev().map(|c| (c.clone(), None)).collect();
    drop(children);
    while let Some((child, parent)) = pending.pop() {
        let at = Some(order.len());
        let grandchildren = child.children.borrow();
        pending.extend(grandchildren.iter().rev().map(|c| (c.clone(), at)));
        drop(grandchildren);
        order.push((child, parent));
    }
    // Each node's height and size (itself and all under it), from the last node back.
    let mut height = vec![0; order.len()];
    let mut size = vec![1; order.len()];
    for at in (0..order.len()).rev() {
        if let Some(parent) = order[at].1 {
            height[parent] = height[parent].max(height[at] + 1);
            size[parent] += size[at];
        }
    }
    let mut flat = Vec::new();
    let mut at = 0;
    while let Some((child, _)) = order.get(at) {
        if height[at] > KEEP_DEPTH {
            // Its children come next in `order`, and take its place in turn.
            child.children.take();
            at += 1;
        } else {
            child.parent.set(Some(Rc::downgrade(node)));
            flat.push(Rc::clone(child));
            at += size[at];
        }
    }
    *node.children.borrow_mut() = flat;
}

/// Whether `node` is a quote or a list, which Markdown indents.
pub(super) fn nests(node: &Node) -> bool {
    let NodeData::Element { name, .. } = &node.data else {
        return false;
    };
    matches!(name.local.as_ref(), "blockquote" | "ul" | "ol" | "li")
}

/// Replaces each quote or list among `node`'s children by its own children, repeatedly,
/// so that none is left: the text stays, in its order, without the indentation.
pub(super) fn dissolve(node: &Handle) {
    let mut pending = node.children.take();
    pending.reverse();
    let mut kept = Vec::with_capacity(pending.len());
    while let Some(child) = pending.pop() {
        if nests(&child) {
            pending.extend(child.children.take().into_iter().rev());
        } else {
            child.parent.set(Some(Rc::downgrade(node)));
            kept.push(child);
        }
    }
    *node.children.borrow_mut() = kept;
}

/// RcDom, counting the elements html5ever builds against a budget and checking [`Stop`] at
/// each, and keeping no parse errors (a hostile page can make millions).
struct Counted<'a> {
    dom: RcDom,
    elements: Cell<usize>,
    budget: usize,
    stop: &'a Stop,
}

impl TreeSink for Counted<'_> {
    type Handle = Handle;
    type Output = RcDom;
    type ElemName<'b>
        = ExpandedName<'b>
    where
        Self: 'b;

    fn finish(self) -> RcDom {
        self.dom
    }

    fn parse_error(&self, _: Cow<'static, str>) {}

    fn get_document(&self) -> Handle {
        self.dom.get_document()
    }

    fn elem_name<'b>(&'b self, target: &'b Handle) -> ExpandedName<'b> {
        self.dom.elem_name(target)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.elements.set(self.elements.get() + 1);
        if self.elements.get() > self.budget || self.stop.is_set() {
            std::panic::resume_unwind(Box::new(Halt));
        }
        self.dom.create_element(name, attrs, flags)
    }

    fn create_comment(&self, text: StrTendril) -> Handle {
        self.dom.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        self.dom.create_pi(target, data)
    }

    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        self.dom.append(parent, child)
    }

    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        self.dom
            .append_based_on_parent_node(element, prev_element, child)
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.dom
            .append_doctype_to_document(name, public_id, system_id)
    }

    fn get_template_contents(&self, target: &Handle) -> Handle {
        self.dom.get_template_contents(target)
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode)
    }

    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        self.dom.append_before_sibling(sibling, new_node)
    }

    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        self.dom.add_attrs_if_missing(target, attrs)
    }

    fn remove_from_parent(&self, target: &Handle) {
        self.dom.remove_from_parent(target)
    }

    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        self.dom.reparent_children(node, new_parent)
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &Handle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }

    fn maybe_clone_an_option_into_selectedcontent(&self, option: &Handle) {
        self.dom.maybe_clone_an_option_into_selectedcontent(option)
    }
}
