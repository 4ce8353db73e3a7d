//! The long syntax (the specification's `abnf-long.txt`): every keyword
//! form reads to the same tree as its brief form.

use txmap_ecl::parse;

/// (long, brief): the two must parse, to equal trees.
const PAIRS: &[(&str, &str)] = &[
    (
        "descendantOf 363787002 |Observable entity|",
        "< 363787002 |Observable entity|",
    ),
    ("descendantOrSelfOf 73211009", "<< 73211009"),
    (
        "childOf 71388002 OR childOf 105590001",
        "<! 71388002 OR <! 105590001",
    ),
    ("childOrSelfOf 71388002", "<<! 71388002"),
    ("ancestorOf 40541001", "> 40541001"),
    ("ancestorOrSelfOf 40541001", ">> 40541001"),
    ("parentOf 40541001", ">! 40541001"),
    ("parentOrSelfOf 40541001", ">>! 40541001"),
    ("top (<< 73211009)", "!!> (<< 73211009)"),
    ("bottom (<< 73211009)", "!!< (<< 73211009)"),
    ("DESCENDANTORSELFOF 73211009", "<< 73211009"),
    ("memberOf 700043003", "^ 700043003"),
    (
        "memberOf [referencedComponentId] 447562003",
        "^ [referencedComponentId] 447562003",
    ),
    ("descendantOf memberOf 700043003", "< ^ 700043003"),
    ("ANY", "*"),
    ("any : 246075003 = ANY", "* : 246075003 = *"),
    (
        "descendantOf 404684003 : [1 to 3] 363698007 = ANY",
        "< 404684003 : [1..3] 363698007 = *",
    ),
    (
        "descendantOf 404684003 : [0 to many] 363698007 = ANY",
        "< 404684003 : [0..*] 363698007 = *",
    ),
    (
        "descendantOf 404684003 : [1..many] { 363698007 = ANY }",
        "< 404684003 : [1..*] { 363698007 = * }",
    ),
    (
        "descendantOf 105590001 : reverseOf 127489000 = 111115",
        "< 105590001 : R 127489000 = 111115",
    ),
    (
        "descendantOf 105590001 : [3 to 3] reverseOf 127489000 = ANY",
        "< 105590001 : [3..3] R 127489000 = *",
    ),
    (
        "descendantOf 404684003 : 116676008 NOT = descendantOrSelfOf 26036001",
        "< 404684003 : 116676008 != << 26036001",
    ),
    (
        "descendantOf 404684003 : 116676008 not= 26036001",
        "< 404684003 : 116676008 != 26036001",
    ),
    (
        "descendantOf 404684003 : 116676008 <> 26036001",
        "< 404684003 : 116676008 != 26036001",
    ),
    (
        "descendantOf 404684003 : (<< 116676008) NOT = 26036001",
        "< 404684003 : (<< 116676008) != 26036001",
    ),
    (
        "descendantOf 27658006 : 1142135004 <> #250",
        "< 27658006 : 1142135004 != #250",
    ),
    (
        "descendantOf 27658006 : 411116001 NOT = \"PANADOL\"",
        "< 27658006 : 411116001 != \"PANADOL\"",
    ),
    (
        "descendantOf 27658006 : 859999999102 <> TRUE",
        "< 27658006 : 859999999102 != true",
    ),
    (
        "descendantOf 404684003 AND descendantOf 19829001",
        "< 404684003 AND < 19829001",
    ),
    (
        "descendantOf 404684003 and descendantOf 19829001",
        "< 404684003 , < 19829001",
    ),
    (
        "descendantOf 404684003 minus descendantOf 19829001",
        "< 404684003 MINUS < 19829001",
    ),
    (
        "descendantOf 56265001 {{ term = \"heart\", type = synonym }}",
        "< 56265001 {{ D term = \"heart\", type = syn }}",
    ),
    (
        "descendantOf 56265001 {{ type = (fullySpecifiedName definition) }}",
        "< 56265001 {{ type = (fsn def) }}",
    ),
    (
        "descendantOf 56265001 {{ dialect = en-gb (acceptable) }}",
        "< 56265001 {{ dialect = en-gb (accept) }}",
    ),
    (
        "descendantOf 56265001 {{ dialect = en-gb (preferred) }}",
        "< 56265001 {{ dialect = en-gb (prefer) }}",
    ),
    (
        "descendantOf 56265001 {{ language NOT = sv }}",
        "< 56265001 {{ language != sv }}",
    ),
    (
        "descendantOf 56265001 {{ C active <> 1 }}",
        "< 56265001 {{ C active = 0 }}",
    ),
    (
        "descendantOf 56265001 {{ C moduleId not = 900000000000207008 }}",
        "< 56265001 {{ C moduleId != 900000000000207008 }}",
    ),
    (
        "descendantOf 56265001 {{ C effectiveTime <> \"20200131\" }}",
        "< 56265001 {{ C effectiveTime != \"20200131\" }}",
    ),
    (
        "descendantOf 56265001 {{ C definitionStatus <> defined }}",
        "< 56265001 {{ C definitionStatus != defined }}",
    ),
    (
        "descendantOf 56265001 {{ id NOT = 12345013 }}",
        "< 56265001 {{ id != 12345013 }}",
    ),
    (
        "memberOf 447562003 {{ M mapTarget <> \"J45.9\" }}",
        "^ 447562003 {{ M mapTarget != \"J45.9\" }}",
    ),
];

#[test]
fn every_long_form_reads_as_its_brief_form() {
    let mut failures = Vec::new();
    for (long, brief) in PAIRS {
        match (parse(long), parse(brief)) {
            (Ok(a), Ok(b)) if a == b => {}
            (a, b) => failures.push(format!("{long}\n  long:  {a:?}\n  brief: {b:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn keywords_are_whole_words() {
    // An alternate identifier whose scheme is a keyword is still one.
    assert!(matches!(
        parse("top#1").map(|e| e.to_string()),
        Ok(s) if s == "top#1"
    ));
    // `descendantOfX` is no keyword: it reads as an identifier without `#`.
    assert!(parse("descendantOfX 73211009").is_err());
    assert!(parse("anyx").is_err());
    // A keyword needs a focus after it.
    assert!(parse("descendantOf").is_err());
}
