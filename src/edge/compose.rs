//! Composition (edge client rule 3): the page streams through lol_html, which leaves every
//! byte as it came except at the first `<article>` start tag outside a `<template>` (comments
//! and scripts are not markup to its tokenizer): there the card, once it has come, goes
//! immediately before the tag and the brand line becomes the article's first child.
//!
//! Bytes before the article leave as they arrive; only at the article does the page wait for
//! the card, never past the budget. Once the article's start tag (and what was added around it)
//! has gone out, the rest of the page is copied without lol_html: nothing after it changes,
//! so parsing it would be work for nothing. When lol_html bails out (markup it cannot parse without
//! ambiguity, or its memory limit), the rest of the page goes out as it came: the input it had
//! not yet given back is kept until it does.

use super::card::{Card, Failure, PendingCard};
use super::FailOpen;
use crate::html::{escape_text, references_for_non_ascii};
use lol_html::html_content::{ContentType, Element};
use lol_html::{
    end_tag, AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings,
    OutputSink, Selector, Settings,
};
use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::OnceLock;

/// Bytes given to lol_html at a time: past the article the rest of a read is copied, not
/// parsed, however large the read.
const REWRITE_SLICE: usize = 4096;
/// Memory one page's rewriting may hold (lol_html's buffers for a start tag split across
/// reads); past it the page passes through.
const REWRITER_MEMORY: usize = 1024 * 1024;

/// How the page is encoded, as its `Content-Type` says: what lol_html reads it as, and whether
/// the card's non-ASCII characters must be written as character references.
pub struct PageEncoding {
    encoding: AsciiCompatibleEncoding,
    utf8: bool,
    /// No charset in the header: a `<meta charset>` may still name one.
    declared: bool,
}

impl PageEncoding {
    /// `None` for a charset that is not ASCII-compatible or unknown: such a page is not
    /// composed.
    pub fn of(charset: Option<&str>) -> Option<PageEncoding> {
        let encoding = match charset {
            None => encoding_rs::WINDOWS_1252,
            Some(label) => encoding_rs::Encoding::for_label(label.as_bytes())?,
        };
        Some(PageEncoding {
            encoding: AsciiCompatibleEncoding::new(encoding)?,
            utf8: encoding == encoding_rs::UTF_8,
            declared: charset.is_some(),
        })
    }
}

/// The rewriter of one page, written into as the page arrives.
pub struct PageWriter<'o> {
    rewriter: Option<HtmlRewriter<'o, Sink<'o>>>,
    state: Rc<RefCell<State>>,
    output: Rc<RefCell<Output<'o>>>,
    /// Input given to the rewriter and not yet given back by it.
    unreturned: Vec<u8>,
    /// Input bytes given back before `unreturned`.
    returned: u64,
}

struct State {
    card: Option<PendingCard>,
    ascii_only: bool,
    article_seen: bool,
    /// Where the first article's start tag ends, in the page's bytes.
    article_tag_end: Option<u64>,
    template_depth: usize,
    /// Bytes the rewriter added (card and brand line).
    inserted: u64,
    failure: Option<Failure>,
}

struct Output<'o> {
    out: &'o mut dyn Write,
    written: u64,
    error: Option<io::Error>,
}

struct Sink<'o>(Rc<RefCell<Output<'o>>>);

impl OutputSink for Sink<'_> {
    fn handle_chunk(&mut self, chunk: &[u8]) {
        self.0.borrow_mut().write(chunk);
    }
}

impl Output<'_> {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            match self.out.write_all(bytes) {
                Ok(()) => self.written += bytes.len() as u64,
                Err(error) => self.error = Some(error),
            }
        }
    }

    fn flush(&mut self) {
        if self.error.is_none() {
            self.error = self.out.flush().err();
        }
    }

    fn take_error(&mut self) -> io::Result<()> {
        self.error.take().map_or(Ok(()), Err)
    }
}

impl<'o> PageWriter<'o> {
    pub fn new(encoding: PageEncoding, card: PendingCard, out: &'o mut dyn Write) -> Self {
        let state = Rc::new(RefCell::new(State {
            card: Some(card),
            ascii_only: !encoding.utf8,
            article_seen: false,
            article_tag_end: None,
            template_depth: 0,
            inserted: 0,
            failure: None,
        }));
        let output = Rc::new(RefCell::new(Output {
            out,
            written: 0,
            error: None,
        }));
        let settings = settings(encoding, &state, &output);
        PageWriter {
            rewriter: Some(HtmlRewriter::new(settings, Sink(Rc::clone(&output)))),
            state,
            output,
            unreturned: Vec::new(),
            returned: 0,
        }
    }

    /// Ends the page: the card placed, or why not.
    pub fn finish(mut self) -> io::Result<Result<(), Failure>> {
        if let Some(rewriter) = self.rewriter.take() {
            if let Err(error) = rewriter.end() {
                self.pass_through_from_here(&error.to_string());
            }
        }
        let mut output = self.output.borrow_mut();
        output.flush();
        output.take_error()?;
        let mut state = self.state.borrow_mut();
        Ok(match (state.article_seen, state.failure.take()) {
            (false, _) => Err(Failure {
                cause: FailOpen::NoArticle,
                detail: "no <article> start tag".into(),
            }),
            (true, Some(failure)) => Err(failure),
            (true, None) => Ok(()),
        })
    }

    /// After lol_html gave up: what it had not given back goes out unchanged, and so does
    /// everything after.
    fn pass_through_from_here(&mut self, why: &str) {
        self.forget_returned();
        self.copy_from_here();
        let mut state = self.state.borrow_mut();
        if !state.article_seen {
            state.article_seen = true;
            state.failure = Some(Failure {
                cause: FailOpen::NoArticle,
                detail: format!("the rewriter gave up before any <article>: {why}"),
            });
        }
    }

    /// Gives `slice` to lol_html, or past the article (or a bail-out) straight to the output.
    fn write_slice(&mut self, slice: &[u8]) {
        let Some(rewriter) = self.rewriter.as_mut() else {
            self.output.borrow_mut().write(slice);
            return;
        };
        self.unreturned.extend_from_slice(slice);
        match rewriter.write(slice) {
            Ok(()) => self.forget_returned(),
            Err(error) => self.pass_through_from_here(&error.to_string()),
        }
        if self.article_is_out() {
            self.copy_from_here();
        }
    }

    /// Whether the article's start tag, and the card and brand line around it, have gone out.
    fn article_is_out(&self) -> bool {
        let state = self.state.borrow();
        let given_back = self.output.borrow().written - state.inserted;
        self.rewriter.is_some() && state.article_tag_end.is_some_and(|end| given_back >= end)
    }

    /// Leaves lol_html: what it holds back goes out as it came, and so does what follows.
    fn copy_from_here(&mut self) {
        self.rewriter = None;
        let unreturned = std::mem::take(&mut self.unreturned);
        self.output.borrow_mut().write(&unreturned);
    }

    /// Forgets the input the rewriter has given back.
    fn forget_returned(&mut self) {
        let written = self.output.borrow().written - self.state.borrow().inserted;
        let returned_here = usize::try_from(written.saturating_sub(self.returned))
            .unwrap_or(usize::MAX)
            .min(self.unreturned.len());
        self.unreturned.drain(..returned_here);
        self.returned += returned_here as u64;
    }
}

impl Write for PageWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        for slice in data.chunks(REWRITE_SLICE) {
            self.write_slice(slice);
        }
        self.output.borrow_mut().take_error()?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut output = self.output.borrow_mut();
        output.flush();
        output.take_error()
    }
}

fn settings<'o>(
    encoding: PageEncoding,
    state: &Rc<RefCell<State>>,
    output: &Rc<RefCell<Output<'o>>>,
) -> Settings<'o, 'static> {
    let templates = Rc::clone(state);
    let articles = Rc::clone(state);
    let output = Rc::clone(output);
    let (template, article) = selectors();
    Settings {
        element_content_handlers: vec![
            (
                Cow::Borrowed(template),
                ElementContentHandlers::default().element(move |el: &mut Element| {
                    templates.borrow_mut().template_depth += 1;
                    let state = Rc::clone(&templates);
                    el.on_end_tag(end_tag!(move |_| {
                        let mut state = state.borrow_mut();
                        state.template_depth = state.template_depth.saturating_sub(1);
                        Ok(())
                    }))
                }),
            ),
            (
                Cow::Borrowed(article),
                ElementContentHandlers::default().element(move |el: &mut Element| {
                    place_card(el, &articles, &output);
                    Ok(())
                }),
            ),
        ],
        encoding: encoding.encoding,
        strict: true,
        adjust_charset_on_meta_tag: !encoding.declared,
        memory_settings: MemorySettings {
            max_allowed_memory_usage: REWRITER_MEMORY,
            ..MemorySettings::default()
        },
        ..Settings::new()
    }
}

/// The two selectors, parsed once for every page.
fn selectors() -> (&'static Selector, &'static Selector) {
    static SELECTORS: OnceLock<(Selector, Selector)> = OnceLock::new();
    let (template, article) = SELECTORS.get_or_init(|| {
        let parse = |text: &str| text.parse().expect("a valid selector");
        (parse("template"), parse("article"))
    });
    (template, article)
}

/// At the first article outside a template: waits for the card and places it.
fn place_card(el: &mut Element, state: &Rc<RefCell<State>>, output: &Rc<RefCell<Output>>) {
    let mut state = state.borrow_mut();
    if state.article_seen || state.template_depth > 0 {
        return;
    }
    state.article_seen = true;
    state.article_tag_end = Some(el.source_location().bytes().end as u64);
    let Some(card) = state.card.take() else {
        return;
    };
    // The bytes before the article leave before the wait.
    output.borrow_mut().flush();
    match card.wait() {
        Ok(card) => {
            let (card_html, brand_line) = as_written(&card, state.ascii_only);
            el.before(&card_html, ContentType::Html);
            state.inserted += card_html.len() as u64;
            if let Some(line) = brand_line {
                el.prepend(&line, ContentType::Html);
                state.inserted += line.len() as u64;
            }
        }
        Err(failure) => state.failure = Some(failure),
    }
}

/// The card and its brand line as this page gets them.
fn as_written(card: &Card, ascii_only: bool) -> (String, Option<String>) {
    let for_page = |text: String| match ascii_only {
        true => references_for_non_ascii(&text),
        false => text,
    };
    let brand_line = card
        .brand
        .as_deref()
        .filter(|brand| !brand.trim().is_empty())
        .map(|brand| {
            format!(
                "<p class=\"agentcard-brand-line\">{}</p>",
                escape_text(brand)
            )
        });
    (for_page(card.html.clone()), brand_line.map(for_page))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARD: &str = "<aside data-brand=\"B &amp; É\">É</aside>";

    fn card() -> PendingCard {
        PendingCard::answered(Ok(Card {
            html: CARD.into(),
            brand: Some("B & É".into()),
        }))
    }

    /// The page written in pieces of `piece` bytes; what came out, and the outcome.
    fn rewrite(page: &[u8], charset: Option<&str>, piece: usize) -> (Vec<u8>, Result<(), Failure>) {
        let mut out = Vec::new();
        let encoding = PageEncoding::of(charset).expect("a known charset");
        let mut writer = PageWriter::new(encoding, card(), &mut out);
        for chunk in page.chunks(piece) {
            writer.write_all(chunk).unwrap();
        }
        let outcome = writer.finish().unwrap();
        (out, outcome)
    }

    #[test]
    fn the_card_goes_before_the_first_real_article_in_any_split() {
        let page = "<p>x</p><!-- <article> --><script>'<article>'</script>\
                    <template><article>t</article></template><ARTICLE class=a>\
                    <h1>h</h1></ARTICLE><article>2</article>";
        let expected = page.replacen(
            "<ARTICLE class=a>",
            &format!("{CARD}<ARTICLE class=a><p class=\"agentcard-brand-line\">B &amp; É</p>"),
            1,
        );
        for piece in [1, 2, 3, 7, 64, page.len()] {
            let (out, outcome) = rewrite(page.as_bytes(), Some("utf-8"), piece);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                expected,
                "pieces of {piece}"
            );
            assert_eq!(outcome, Ok(()));
        }
    }

    #[test]
    fn a_page_in_another_charset_gets_references() {
        let (out, _) = rewrite(b"<article>\xE9</article>", Some("iso-8859-1"), 5);
        let expected = b"<aside data-brand=\"B &amp; &#201;\">&#201;</aside><article>\
                         <p class=\"agentcard-brand-line\">B &amp; &#201;</p>\xE9</article>";
        assert_eq!(out, expected.to_vec());
    }

    #[test]
    fn a_page_without_article_comes_out_as_it_went_in() {
        let page = b"<!doctype html><html><body><articles><article-x><p>\xFF</p></body></html>";
        let (out, outcome) = rewrite(page, Some("utf-8"), 4);
        assert_eq!(out, page.to_vec());
        assert_eq!(outcome.unwrap_err().cause, FailOpen::NoArticle);
    }

    #[test]
    fn markup_the_rewriter_cannot_parse_passes_through_unchanged() {
        let page = b"<p>before</p><select><xmp><script>x</script></select><article>a</article>";
        for piece in [1, 5, page.len()] {
            let (out, outcome) = rewrite(page, Some("utf-8"), piece);
            assert_eq!(out, page.to_vec(), "pieces of {piece}");
            assert_eq!(outcome.unwrap_err().cause, FailOpen::NoArticle);
        }
    }

    #[test]
    fn unknown_or_wide_charsets_are_not_composed() {
        assert!(PageEncoding::of(Some("utf-16le")).is_none());
        assert!(PageEncoding::of(Some("klingon")).is_none());
        assert!(PageEncoding::of(None).is_some());
    }
}
