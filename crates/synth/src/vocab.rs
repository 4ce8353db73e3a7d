//! Plausible clinical terms for synthetic concepts.
//!
//! Search, display and `$lookup` code behave differently on realistic text
//! than on "Concept 12345": word frequencies, term lengths, accented
//! eponyms, case-sensitive words, US/GB spelling pairs. So each branch of
//! the hierarchy has term patterns: slots filled from word lists (a slot
//! may appear in several forms of a pattern, and aligned lists such as
//! "stomach"/"gastric" give related synonyms), and the first form is the
//! preferred term.
//!
//! Terms are a pure function of (branch, ordinal within branch): the
//! ordinal is scrambled by an invertible affine map modulo the size of the
//! pattern's slot space and decomposed into slot indices. Distinct
//! ordinals therefore give distinct terms (a wrapped ordinal gets a
//! ", variant N" suffix), which keeps active FSNs unique without a global
//! "seen" set, and lets the extension generator recompute any base term
//! without replaying the release.

use crate::meta::{
    ACTION, BODY_STRUCTURE, CASE_INSENSITIVE, CASE_SENSITIVE, CLINICAL_FINDING, DISEASE,
    ENVIRONMENT, EVENT, INITIAL_INSENSITIVE, MEDICINAL_PRODUCT, MORPHOLOGIC_ABNORMALITY,
    OBSERVABLE, ORGANISM, PHYSICAL_FORCE, PHYSICAL_OBJECT, PROCEDURE, QUALIFIER, RECORD_ARTIFACT,
    SITUATION, SOCIAL, SPECIAL, SPECIMEN, STAGING, SUBSTANCE,
};

/// A part of a term form: literal text, or the word chosen for a slot.
#[derive(Debug)]
pub(crate) enum Part {
    L(&'static str),
    S(u8, &'static [&'static str]),
}
use Part::{L, S};

/// Forms sharing slots; form 0 is the preferred term.
#[derive(Debug)]
pub(crate) struct Pattern {
    pub(crate) forms: &'static [&'static [Part]],
}

/// Which attributes a branch's concepts carry (see `emit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Profile {
    None,
    Disorder,
    Finding,
    Procedure,
    Product,
    BodyStructure,
    Situation,
    Observable,
    Specimen,
}

/// A synthetic sub-hierarchy: where it hangs, its semantic tag, its share
/// of the synthetic concepts, its term patterns and its attributes.
#[derive(Debug)]
pub(crate) struct BranchDef {
    pub(crate) root: u64,
    pub(crate) tag: &'static str,
    pub(crate) weight: f64,
    /// Patterns with the number of ordinal residues each gets.
    pub(crate) patterns: &'static [(&'static Pattern, u32)],
    pub(crate) profile: Profile,
    /// Maximum number of role groups (0: no grouped attributes).
    pub(crate) group_cap: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Branch {
    Disorder,
    Finding,
    Procedure,
    BodyStructure,
    Morphology,
    Organism,
    Substance,
    Product,
    Qualifier,
    Action,
    DoseForm,
    Observable,
    Situation,
    Event,
    PhysicalObject,
    Environment,
    PhysicalForce,
    RecordArtifact,
    Social,
    Special,
    Specimen,
    Staging,
}

pub(crate) const BRANCH_COUNT: usize = 22;

impl Branch {
    pub(crate) const ALL: [Branch; BRANCH_COUNT] = [
        Branch::Disorder,
        Branch::Finding,
        Branch::Procedure,
        Branch::BodyStructure,
        Branch::Morphology,
        Branch::Organism,
        Branch::Substance,
        Branch::Product,
        Branch::Qualifier,
        Branch::Action,
        Branch::DoseForm,
        Branch::Observable,
        Branch::Situation,
        Branch::Event,
        Branch::PhysicalObject,
        Branch::Environment,
        Branch::PhysicalForce,
        Branch::RecordArtifact,
        Branch::Social,
        Branch::Special,
        Branch::Specimen,
        Branch::Staging,
    ];

    pub(crate) fn from_index(i: u8) -> Option<Branch> {
        Branch::ALL.get(usize::from(i)).copied()
    }

    pub(crate) fn def(self) -> &'static BranchDef {
        &BRANCHES[self as usize]
    }
}

const fn b(
    root: u64,
    tag: &'static str,
    weight: f64,
    patterns: &'static [(&'static Pattern, u32)],
    profile: Profile,
    group_cap: u8,
) -> BranchDef {
    BranchDef {
        root,
        tag,
        weight,
        patterns,
        profile,
        group_cap,
    }
}

/// Indexed by `Branch as usize`.
#[rustfmt::skip]
pub(crate) static BRANCHES: [BranchDef; BRANCH_COUNT] = [
    b(DISEASE, "disorder", 230.0, &[(&DISORDER, 19), (&EPONYM_DISORDER, 1)], Profile::Disorder, 8),
    b(CLINICAL_FINDING, "finding", 100.0, &[(&FINDING, 9), (&MEASURE_FINDING, 1)], Profile::Finding, 4),
    b(PROCEDURE, "procedure", 140.0, &[(&PROCEDURE_P, 1)], Profile::Procedure, 8),
    b(BODY_STRUCTURE, "body structure", 90.0, &[(&BODY, 1)], Profile::BodyStructure, 0),
    b(MORPHOLOGIC_ABNORMALITY, "morphologic abnormality", 30.0, &[(&MORPHOLOGY, 1)], Profile::None, 0),
    b(ORGANISM, "organism", 80.0, &[(&ORGANISM_P, 1)], Profile::None, 0),
    b(SUBSTANCE, "substance", 65.0, &[(&DRUG_SUBSTANCE, 19), (&BIOLOGIC_SUBSTANCE, 1)], Profile::None, 0),
    b(MEDICINAL_PRODUCT, "medicinal product", 60.0, &[(&PRODUCT_P, 1)], Profile::Product, 3),
    b(QUALIFIER, "qualifier value", 40.0, &[(&QUALIFIER_P, 1)], Profile::None, 0),
    b(ACTION, "qualifier value", 8.0, &[(&ACTION_P, 1)], Profile::None, 0),
    b(QUALIFIER, "dose form", 5.0, &[(&DOSE_FORM_P, 1)], Profile::None, 0),
    b(OBSERVABLE, "observable entity", 30.0, &[(&OBSERVABLE_P, 1)], Profile::Observable, 0),
    b(SITUATION, "situation", 20.0, &[(&SITUATION_P, 1)], Profile::Situation, 0),
    b(EVENT, "event", 12.0, &[(&EVENT_P, 1)], Profile::None, 0),
    b(PHYSICAL_OBJECT, "physical object", 40.0, &[(&OBJECT_P, 1)], Profile::None, 0),
    b(ENVIRONMENT, "environment", 8.0, &[(&ENVIRONMENT_P, 1)], Profile::None, 0),
    b(PHYSICAL_FORCE, "physical force", 2.0, &[(&FORCE_P, 1)], Profile::None, 0),
    b(RECORD_ARTIFACT, "record artifact", 4.0, &[(&RECORD_P, 1)], Profile::None, 0),
    b(SOCIAL, "social concept", 12.0, &[(&SOCIAL_P, 1)], Profile::None, 0),
    b(SPECIAL, "navigational concept", 1.0, &[(&SPECIAL_P, 1)], Profile::None, 0),
    b(SPECIMEN, "specimen", 15.0, &[(&SPECIMEN_P, 1)], Profile::Specimen, 0),
    b(STAGING, "assessment scale", 6.0, &[(&SCALE_P, 1)], Profile::None, 0),
];

// ---------------------------------------------------------------------------
// Word lists. Slot lists used together in one slot must have equal length.

static SITE_N: &[&str] = &[
    "stomach",
    "liver",
    "kidney",
    "heart",
    "lung",
    "skin",
    "brain",
    "colon",
    "esophagus",
    "duodenum",
    "pancreas",
    "spleen",
    "urinary bladder",
    "urethra",
    "prostate",
    "uterus",
    "ovary",
    "breast",
    "thyroid gland",
    "adrenal gland",
    "femur",
    "tibia",
    "humerus",
    "radius",
    "ulna",
    "clavicle",
    "scapula",
    "vertebra",
    "pelvis",
    "knee joint",
    "hip joint",
    "shoulder joint",
    "ankle joint",
    "retina",
    "cornea",
    "middle ear",
    "tongue",
    "larynx",
    "trachea",
    "bronchus",
    "pleura",
    "pericardium",
    "aorta",
    "coronary artery",
    "carotid artery",
    "lymph node",
    "bone marrow",
    "spinal cord",
    "sciatic nerve",
    "cecum",
    "appendix",
    "rectum",
    "gallbladder",
    "bile duct",
    "peritoneum",
    "abdominal wall",
    "scalp",
    "maxillary sinus",
    "tonsil",
    "parotid gland",
    "testis",
    "cervix uteri",
    "vagina",
    "placenta",
];
static SITE_A: &[&str] = &[
    "gastric",
    "hepatic",
    "renal",
    "cardiac",
    "pulmonary",
    "cutaneous",
    "cerebral",
    "colonic",
    "esophageal",
    "duodenal",
    "pancreatic",
    "splenic",
    "vesical",
    "urethral",
    "prostatic",
    "uterine",
    "ovarian",
    "mammary",
    "thyroid",
    "adrenal",
    "femoral",
    "tibial",
    "humeral",
    "radial",
    "ulnar",
    "clavicular",
    "scapular",
    "vertebral",
    "pelvic",
    "knee joint",
    "hip joint",
    "shoulder joint",
    "ankle joint",
    "retinal",
    "corneal",
    "middle ear",
    "lingual",
    "laryngeal",
    "tracheal",
    "bronchial",
    "pleural",
    "pericardial",
    "aortic",
    "coronary artery",
    "carotid artery",
    "lymph node",
    "bone marrow",
    "spinal cord",
    "sciatic nerve",
    "cecal",
    "appendiceal",
    "rectal",
    "gallbladder",
    "biliary",
    "peritoneal",
    "abdominal wall",
    "scalp",
    "maxillary sinus",
    "tonsillar",
    "parotid",
    "testicular",
    "cervical",
    "vaginal",
    "placental",
];
static ADJ_DIS: &[&str] = &[
    "",
    "acute ",
    "chronic ",
    "subacute ",
    "recurrent ",
    "congenital ",
    "acquired ",
    "traumatic ",
    "primary ",
    "secondary ",
    "benign ",
    "malignant ",
    "idiopathic ",
    "infective ",
    "allergic ",
    "drug-induced ",
    "postoperative ",
    "neonatal ",
    "pediatric ",
    "hereditary ",
];
static MORPH: &[&str] = &[
    "inflammation",
    "ulcer",
    "abscess",
    "cyst",
    "neoplasm",
    "carcinoma",
    "adenoma",
    "fibrosis",
    "necrosis",
    "hemorrhage",
    "edema",
    "stenosis",
    "obstruction",
    "perforation",
    "fracture",
    "dislocation",
    "hyperplasia",
    "atrophy",
    "hypertrophy",
    "calcification",
    "infarction",
    "thrombosis",
    "embolism",
    "aneurysm",
    "fistula",
    "hernia",
    "laceration",
    "contusion",
    "erosion",
    "granuloma",
    "polyp",
    "stricture",
    "dilatation",
    "tumor",
    "lesion",
    "lymphoma",
    "sarcoma",
    "dysplasia",
    "ischemia",
    "degeneration",
    "deformity",
    "malformation",
    "infection",
    "hematoma",
    "rupture",
];
static CAUSE: &[&str] = &[
    "",
    " due to Escherichia coli",
    " due to Staphylococcus aureus",
    " due to trauma",
    " due to radiation",
    " due to drug",
    " due to Streptococcus pneumoniae",
    " due to herpes simplex virus",
    " due to fungus",
    " due to Candida albicans",
    " due to alcohol",
    " due to diabetes mellitus",
    " due to hypertension",
    " due to influenza A virus",
    " due to Mycobacterium tuberculosis",
    " due to HIV",
];
static EPO_ADJ: &[&str] = &[
    "",
    "acute ",
    "chronic ",
    "atypical ",
    "juvenile ",
    "familial ",
    "classic ",
    "incomplete ",
];
static EPONYM: &[&str] = &[
    "Ménière",
    "Sjögren",
    "Guillain-Barré",
    "Behçet",
    "Waldenström",
    "Löfgren",
    "Legg-Calvé-Perthes",
    "Köhler",
    "Bürger",
    "Ménétrier",
    "Déjerine-Sottas",
    "Schönlein-Henoch",
    "Parkinson",
    "Crohn",
    "Addison",
    "Cushing",
    "Graves",
    "Hashimoto",
    "Kawasaki",
    "Raynaud",
    "Wilson",
    "Huntington",
    "Alzheimer",
    "Hodgkin",
    "Kaposi",
    "Paget",
    "Marfan",
    "Tourette",
    "Whipple",
    "Wernicke",
];
static EPONYM_POSS: &[&str] = &[
    "Ménière's",
    "Sjögren's",
    "Guillain-Barré's",
    "Behçet's",
    "Waldenström's",
    "Löfgren's",
    "Legg-Calvé-Perthes'",
    "Köhler's",
    "Bürger's",
    "Ménétrier's",
    "Déjerine-Sottas'",
    "Schönlein-Henoch's",
    "Parkinson's",
    "Crohn's",
    "Addison's",
    "Cushing's",
    "Graves'",
    "Hashimoto's",
    "Kawasaki's",
    "Raynaud's",
    "Wilson's",
    "Huntington's",
    "Alzheimer's",
    "Hodgkin's",
    "Kaposi's",
    "Paget's",
    "Marfan's",
    "Tourette's",
    "Whipple's",
    "Wernicke's",
];
static EPO_KIND: &[&str] = &[" disease", " syndrome", " disorder", " phenomenon"];
static EPO_SUFFIX: &[&str] = &[
    "",
    " type 1",
    " type 2",
    " type 3",
    " with complication",
    " without complication",
    " of left side",
    " of right side",
    " in pregnancy",
    " in remission",
];
static SEVERITY: &[&str] = &[
    "",
    "mild ",
    "moderate ",
    "severe ",
    "intermittent ",
    "persistent ",
    "localized ",
    "generalized ",
    "episodic ",
    "recurrent ",
];
static SYMPTOM: &[&str] = &[
    "pain",
    "swelling",
    "tenderness",
    "stiffness",
    "numbness",
    "itching",
    "bleeding",
    "discharge",
    "mass",
    "weakness",
    "redness",
    "discoloration",
    "tingling",
    "cramp",
    "spasm",
    "dryness",
    "warmth",
    "crepitus",
    "instability",
    "color change",
    "hypersensitivity",
    "lump",
];
static FIND_TIME: &[&str] = &[
    "",
    " at rest",
    " on exertion",
    " at night",
    " after meals",
    " on movement",
    " on palpation",
    " in the morning",
];
static DIRECTION: &[&str] = &[
    "increased ",
    "decreased ",
    "abnormal ",
    "normal ",
    "high ",
    "low ",
    "borderline ",
    "fluctuating ",
];
static DIRECTION_WORD: &[&str] = &[
    "increased",
    "decreased",
    "abnormal",
    "normal",
    "high",
    "low",
    "borderline",
    "fluctuating",
];
static MEASURE: &[&str] = &[
    "blood pressure",
    "heart rate",
    "body temperature",
    "serum potassium",
    "serum sodium",
    "blood glucose",
    "hemoglobin level",
    "white blood cell count",
    "platelet count",
    "respiratory rate",
    "oxygen saturation",
    "urine output",
    "body weight",
    "creatinine level",
    "bilirubin level",
    "pH of blood",
    "HbA1c level",
];
static MEASURE_CONTEXT: &[&str] = &["", " for age", " in pregnancy", " during exercise"];
static MEASURE_TIMING: &[&str] = &[
    "",
    " on admission",
    " at discharge",
    " at follow-up",
    " during treatment",
    " after surgery",
    " postpartum",
    " at birth",
    " on repeat testing",
    " in screening",
];
static APPROACH: &[&str] = &[
    "",
    "laparoscopic ",
    "endoscopic ",
    "open ",
    "percutaneous ",
    "robot-assisted ",
    "emergency ",
    "diagnostic ",
    "therapeutic ",
    "partial ",
    "total ",
    "radical ",
];
static ACTION_N: &[&str] = &[
    "excision",
    "biopsy",
    "repair",
    "resection",
    "incision",
    "drainage",
    "reconstruction",
    "fixation",
    "transplantation",
    "ligation",
    "dilation",
    "catheterization",
    "aspiration",
    "injection",
    "irrigation",
    "examination",
    "ultrasonography",
    "radiography",
    "computed tomography",
    "magnetic resonance imaging",
    "inspection",
    "debridement",
    "suture",
    "amputation",
    "replacement",
    "stabilization",
    "decompression",
    "exploration",
];
static ACTION_SHORT: &[&str] = &[
    "excision",
    "biopsy",
    "repair",
    "resection",
    "incision",
    "drainage",
    "reconstruction",
    "fixation",
    "transplant",
    "ligation",
    "dilation",
    "catheterization",
    "aspiration",
    "injection",
    "irrigation",
    "examination",
    "ultrasound scan",
    "X-ray",
    "CT",
    "MRI",
    "inspection",
    "debridement",
    "suture",
    "amputation",
    "replacement",
    "stabilization",
    "decompression",
    "exploration",
];
static PROC_SUFFIX: &[&str] = &[
    "",
    " with anesthesia",
    " using laser",
    " with contrast",
    " under image guidance",
    " with graft",
    " using implant",
    " under local anesthesia",
];
static BS_PRE: &[&str] = &["structure of ", "entire "];
static BS_DEPTH: &[&str] = &["", "superficial ", "deep ", "inner ", "outer "];
static BS_PART: &[&str] = &[
    "",
    "wall of ",
    "mucosa of ",
    "surface of ",
    "lumen of ",
    "muscle of ",
    "epithelium of ",
    "vasculature of ",
    "capsule of ",
    "connective tissue of ",
    "segment of ",
    "border of ",
    "apex of ",
    "base of ",
    "nerve of ",
    "lymphatic vessel of ",
];
static BS_PART_NOUN: &[&str] = &[
    "structure",
    "wall",
    "mucosa",
    "surface",
    "lumen",
    "muscle",
    "epithelium",
    "vasculature",
    "capsule",
    "connective tissue",
    "segment",
    "border",
    "apex",
    "base",
    "nerve",
    "lymphatic vessel",
];
static POSITION: &[&str] = &[
    "",
    "left ",
    "right ",
    "upper ",
    "lower ",
    "anterior ",
    "posterior ",
    "medial ",
    "lateral ",
    "distal ",
    "proximal ",
];
static MORPH_ADJ: &[&str] = &[
    "",
    "nodular ",
    "papillary ",
    "mucinous ",
    "pleomorphic ",
    "sclerosing ",
    "ulcerative ",
    "proliferative ",
    "cystic ",
    "fibrous ",
    "hemorrhagic ",
    "necrotizing ",
    "granulomatous ",
    "focal ",
    "diffuse ",
    "multifocal ",
];
static MORPH_SUFFIX: &[&str] = &["", ", grade 1", ", grade 2", ", grade 3", " in situ"];
static ORG_PRE: &[&str] = &[
    "",
    "multidrug-resistant ",
    "toxigenic ",
    "non-toxigenic ",
    "methicillin-resistant ",
    "penicillin-resistant ",
    "vancomycin-resistant ",
    "beta-lactamase-producing ",
];
static GENUS: &[&str] = &[
    "Escherichia",
    "Staphylococcus",
    "Streptococcus",
    "Klebsiella",
    "Pseudomonas",
    "Salmonella",
    "Shigella",
    "Clostridium",
    "Bacillus",
    "Mycobacterium",
    "Neisseria",
    "Haemophilus",
    "Listeria",
    "Legionella",
    "Bordetella",
    "Campylobacter",
    "Helicobacter",
    "Enterococcus",
    "Proteus",
    "Serratia",
    "Candida",
    "Aspergillus",
    "Cryptococcus",
    "Plasmodium",
    "Toxoplasma",
    "Giardia",
    "Trichomonas",
    "Treponema",
    "Borrelia",
    "Leptospira",
    "Chlamydia",
    "Mycoplasma",
    "Rickettsia",
    "Yersinia",
    "Vibrio",
    "Brucella",
    "Corynebacterium",
    "Actinomyces",
    "Nocardia",
    "Acinetobacter",
];
static GENUS_ABBR: &[&str] = &[
    "E.", "Staph.", "Strep.", "K.", "Ps.", "Salm.", "Sh.", "Cl.", "B.", "M.", "N.", "H.", "L.",
    "Leg.", "Bord.", "Camp.", "Hel.", "Ent.", "Pr.", "Ser.", "C.", "Asp.", "Cr.", "P.", "T.", "G.",
    "Tr.", "Trep.", "Bor.", "Lept.", "Chl.", "Myc.", "R.", "Y.", "V.", "Br.", "Cor.", "Act.",
    "Noc.", "Ac.",
];
static SPECIES: &[&str] = &[
    "coli",
    "aureus",
    "pneumoniae",
    "pyogenes",
    "agalactiae",
    "epidermidis",
    "typhi",
    "enteritidis",
    "difficile",
    "perfringens",
    "anthracis",
    "cereus",
    "tuberculosis",
    "leprae",
    "meningitidis",
    "gonorrhoeae",
    "influenzae",
    "monocytogenes",
    "pertussis",
    "jejuni",
    "pylori",
    "faecalis",
    "mirabilis",
    "marcescens",
    "albicans",
    "fumigatus",
    "neoformans",
    "falciparum",
    "vivax",
    "gondii",
    "lamblia",
    "vaginalis",
    "pallidum",
    "burgdorferi",
    "interrogans",
    "trachomatis",
    "pestis",
    "cholerae",
    "melitensis",
    "diphtheriae",
];
static STRAIN: &[&str] = &[
    "",
    " group A",
    " group B",
    " serotype 1",
    " serotype 2",
    " subtype H1",
    " biovar 3",
    " strain K12",
    " variant X",
];
static SUB_PRE: &[&str] = &[
    "amo", "cef", "levo", "dexa", "meto", "pra", "ator", "losa", "sita", "rivaro", "apixa", "ome",
    "panto", "flu", "sertra", "ven", "ibu", "napro", "keto", "clo", "doxy", "azi", "cipro",
    "genta", "vanco", "metro", "predni", "hydro", "furo", "spirono",
];
static SUB_CORE: &[&str] = &[
    "xi", "ta", "mo", "va", "ra", "la", "zo", "ne", "pi", "do", "ri",
];
static SUB_SUF: &[&str] = &[
    "cillin", "mycin", "floxacin", "pril", "sartan", "statin", "olol", "azole", "prazole",
    "gliptin", "xaban", "tidine", "profen", "sone", "semide", "lactone", "cycline", "vir", "mab",
    "tinib", "pine", "dronate", "caine", "triptan",
];
static SALT: &[&str] = &[
    "",
    " hydrochloride",
    " sodium",
    " sulfate",
    " potassium",
    " citrate",
    " acetate",
    " phosphate",
    " maleate",
    " tartrate",
    " succinate",
    " mesylate",
    " calcium",
    " magnesium",
    " bromide",
];
static BIO_PRE: &[&str] = &[
    "",
    "recombinant ",
    "human ",
    "bovine ",
    "porcine ",
    "synthetic ",
];
static BIO: &[&str] = &[
    "hemoglobin",
    "estrogen",
    "insulin",
    "albumin",
    "collagen",
    "fibrinogen",
    "thrombin",
    "interferon",
    "immunoglobulin G",
    "immunoglobulin E",
    "growth hormone",
    "erythropoietin",
    "heparin",
    "glucagon",
    "calcitonin",
    "oxytocin",
    "vasopressin",
    "somatostatin",
];
static BIO_SUF: &[&str] = &[
    "",
    " analog",
    " fragment",
    " receptor",
    " antibody",
    " complex",
];
static BIO_FORM: &[&str] = &[
    "",
    " preparation",
    " concentrate",
    " solution",
    " isoform 1",
    " isoform 2",
];
static STRENGTH: &[&str] = &[
    "", "10 mg ", "20 mg ", "50 mg ", "100 mg ", "250 mg ", "500 mg ", "1 g ", "5 mg/mL ",
    "0.5 mg ",
];
static DOSE_FORM: &[&str] = &[
    "oral tablet",
    "oral capsule",
    "oral solution",
    "oral suspension",
    "solution for injection",
    "powder for solution for injection",
    "cutaneous cream",
    "cutaneous ointment",
    "eye drops",
    "ear drops",
    "nasal spray",
    "inhalation powder",
    "transdermal patch",
    "rectal suppository",
    "vaginal cream",
    "prolonged-release oral tablet",
];
static DOSE_SHORT: &[&str] = &[
    "tab",
    "cap",
    "oral soln",
    "oral susp",
    "inj soln",
    "inj pwdr",
    "crm",
    "oint",
    "eye drp",
    "ear drp",
    "nasal spr",
    "inh pwdr",
    "patch",
    "supp",
    "vag crm",
    "PR tab",
];
static DF_MOD: &[&str] = &[
    "",
    "conventional release ",
    "modified-release ",
    "gastro-resistant ",
    "dispersible ",
    "chewable ",
    "effervescent ",
    "orodispersible ",
    "film-coated ",
    "coated ",
];
static DF_PACK: &[&str] = &[
    "",
    " in sachet",
    " in vial",
    " in ampule",
    " in prefilled syringe",
    " in blister pack",
];
static DF_SUF: &[&str] = &[
    "",
    " for children",
    " for veterinary use",
    " multidose",
    " single-dose",
];
static Q_ADJ: &[&str] = &[
    "",
    "mild ",
    "moderate ",
    "severe ",
    "left ",
    "right ",
    "bilateral ",
    "acute ",
    "chronic ",
    "early ",
    "late ",
    "high ",
    "low ",
    "partial ",
    "complete ",
    "primary ",
    "secondary ",
    "persistent ",
    "intermittent ",
    "progressive ",
];
static Q_NOUN: &[&str] = &[
    "severity",
    "grade",
    "stage",
    "course",
    "onset",
    "side",
    "intent",
    "priority",
    "position",
    "degree",
    "pattern",
    "phase",
    "type",
    "extent",
    "frequency",
    "intensity",
    "distribution",
    "aspect",
    "distance",
    "response",
];
static Q_NUM: &[&str] = &[
    "", " 1", " 2", " 3", " 4", " I", " II", " III", " IV", " A", " B",
];
static Q_SUF: &[&str] = &[
    "",
    " finding value",
    " qualifier",
    " category",
    " descriptor",
    " modifier",
    " index",
    " level",
    " state",
    " class",
];
static ACT_ADJ: &[&str] = &[
    "",
    "surgical ",
    "diagnostic ",
    "therapeutic ",
    "manual ",
    "automated ",
    "minimally invasive ",
    "repeated ",
];
static ACT_EXT: &[&str] = &[
    "",
    "partial ",
    "complete ",
    "simple ",
    "complex ",
    "staged ",
    "primary ",
    "secondary ",
    "revision ",
    "extended ",
    "limited ",
    "bilateral ",
];
static ACT_TECH: &[&str] = &[
    "",
    " with imaging",
    " by laser",
    " by cautery",
    " by cryotherapy",
];
static OBS_PROP: &[&str] = &[
    "concentration",
    "mass",
    "volume",
    "rate",
    "presence",
    "level",
    "count",
    "ratio",
    "activity",
    "titer",
    "pressure",
    "temperature",
    "color",
    "size",
    "length",
    "duration",
];
static OBS_COMP: &[&str] = &[
    "glucose",
    "sodium",
    "potassium",
    "creatinine",
    "urea",
    "hemoglobin",
    "albumin",
    "bilirubin",
    "cholesterol",
    "triglyceride",
    "calcium",
    "magnesium",
    "ferritin",
    "insulin",
    "cortisol",
    "thyroxine",
    "estrogen",
    "troponin",
    "lactate",
    "oxygen",
    "carbon dioxide",
    "HbA1c",
    "IgG",
    "IgE",
    "C-reactive protein",
    "vitamin D",
    "vitamin B12",
    "folate",
];
static OBS_SYS: &[&str] = &[
    "serum",
    "plasma",
    "urine",
    "blood",
    "cerebrospinal fluid",
    "saliva",
    "sweat",
    "synovial fluid",
    "pleural fluid",
    "feces",
    "arterial blood",
    "venous blood",
    "capillary blood",
];
static OBS_SUF: &[&str] = &[
    "",
    " at rest",
    " after fasting",
    " over 24 hours",
    " at timepoint",
    " during exercise",
];
static SIT_PRE: &[&str] = &[
    "history of ",
    "family history of ",
    "suspected ",
    "no history of ",
    "personal history of ",
    "at risk of ",
    "fear of ",
    "absence of ",
    "resolved ",
    "past history of ",
];
static EV_ADJ: &[&str] = &[
    "",
    "accidental ",
    "intentional ",
    "occupational ",
    "recreational ",
    "domestic ",
    "industrial ",
    "non-traffic ",
    "traffic ",
];
static EV_NOUN: &[&str] = &[
    "fall",
    "collision",
    "accident",
    "exposure",
    "burn",
    "drowning",
    "assault",
    "bite",
    "sting",
    "poisoning",
    "explosion",
    "fire",
    "flood",
    "earthquake",
    "electrocution",
];
static EV_WHO: &[&str] = &[
    "",
    " of child",
    " of elderly person",
    " of pregnant woman",
    " of worker",
];
static EV_CTX: &[&str] = &[
    "",
    " from ladder",
    " at home",
    " at work",
    " in water",
    " on stairs",
    " in motor vehicle",
    " during sport",
    " involving machinery",
    " by animal",
    " to smoke",
    " to chemical",
    " to radiation",
    " in hospital",
    " outdoors",
    " at school",
];
static PO_SIZE: &[&str] = &["", "small ", "medium ", "large ", "extra-large ", "mini "];
static MATERIAL: &[&str] = &[
    "",
    "silicone ",
    "latex ",
    "stainless steel ",
    "titanium ",
    "polyethylene ",
    "polyurethane ",
    "ceramic ",
    "plastic ",
    "glass ",
    "nitinol ",
    "cobalt-chromium ",
    "PTFE ",
    "carbon fiber ",
];
static DEVICE: &[&str] = &[
    "urinary catheter",
    "central venous catheter",
    "endotracheal tube",
    "bone screw",
    "bone plate",
    "hip prosthesis",
    "knee prosthesis",
    "cardiac pacemaker",
    "stent",
    "surgical mesh",
    "suture material",
    "syringe",
    "needle",
    "wound dressing",
    "orthosis",
    "wheelchair",
    "hearing aid",
    "contact lens",
    "intraocular lens",
    "dental implant",
    "insulin pump",
    "infusion set",
    "oxygen mask",
    "nebulizer",
    "glucose meter",
    "thermometer",
    "scalpel",
    "forceps",
    "retractor",
    "implantable defibrillator",
];
static PO_SUF: &[&str] = &[
    "",
    ", single-use",
    ", reusable",
    ", sterile",
    ", non-sterile",
    ", pediatric",
    ", adult",
    ", coated",
    ", radiopaque",
    ", disposable",
];
static SP_TYPE: &[&str] = &[
    "tissue",
    "biopsy",
    "fluid",
    "swab",
    "aspirate",
    "brushings",
    "washings",
    "scrapings",
    "cells",
    "smear",
    "exudate",
    "pus",
    "fine needle aspirate",
    "core biopsy",
    "resection",
];
static SIDE: &[&str] = &["", "left ", "right "];
static SP_METHOD: &[&str] = &[
    "",
    " obtained by excision",
    " obtained by biopsy",
    " obtained by aspiration",
    " obtained by brushing",
    " obtained at autopsy",
    " obtained by needle",
];
static ENV_REGION: &[&str] = &["", "northern ", "southern ", "eastern ", "western "];
static ENV_ADJ: &[&str] = &[
    "",
    "rural ",
    "urban ",
    "private ",
    "public ",
    "pediatric ",
    "psychiatric ",
    "military ",
    "mobile ",
    "community ",
    "university ",
    "regional ",
    "temporary ",
];
static ENV_NOUN: &[&str] = &[
    "hospital",
    "clinic",
    "health center",
    "nursing home",
    "hospice",
    "pharmacy",
    "laboratory",
    "ambulance",
    "emergency department",
    "operating room",
    "intensive care unit",
    "outpatient department",
    "school",
    "workplace",
    "prison",
    "shelter",
    "home",
    "farm",
    "factory",
    "mine",
];
static ENV_SUF: &[&str] = &["", " department", " ward", " unit", " building", " annex"];
static PF_CTX: &[&str] = &["", "environmental ", "therapeutic ", "industrial "];
static PF_ADJ: &[&str] = &[
    "",
    "high ",
    "low ",
    "sudden ",
    "sustained ",
    "alternating ",
    "direct ",
    "indirect ",
];
static PF_NOUN: &[&str] = &[
    "pressure",
    "heat",
    "cold",
    "electricity",
    "radiation",
    "vibration",
    "noise",
    "acceleration",
    "deceleration",
    "friction",
    "magnetic field",
    "ultraviolet light",
    "ionizing radiation",
    "microwave",
    "laser light",
    "sound wave",
    "gravity",
    "torsion",
    "compression",
    "shear force",
];
static PF_SUF: &[&str] = &["", " exposure", " source", " gradient"];
static RA_STATE: &[&str] = &["", "draft ", "signed ", "amended ", "archived "];
static RA_ADJ: &[&str] = &[
    "",
    "electronic ",
    "paper ",
    "summary ",
    "structured ",
    "scanned ",
];
static RA_NOUN: &[&str] = &[
    "discharge summary",
    "referral letter",
    "clinical note",
    "operative report",
    "radiology report",
    "laboratory report",
    "care plan",
    "medication list",
    "consent form",
    "death certificate",
    "birth certificate",
    "progress note",
    "consultation note",
    "nursing record",
    "immunization record",
];
static RA_SUF: &[&str] = &[
    "",
    " document",
    " record",
    " section",
    " template",
    " entry",
];
static SO_STATUS: &[&str] = &[
    "",
    "married ",
    "single ",
    "widowed ",
    "divorced ",
    "cohabiting ",
    "separated ",
];
static SO_ADJ: &[&str] = &[
    "",
    "retired ",
    "student ",
    "trainee ",
    "senior ",
    "part-time ",
    "self-employed ",
    "unemployed former ",
];
static SO_OCC: &[&str] = &[
    "nurse",
    "physician",
    "teacher",
    "farmer",
    "engineer",
    "lawyer",
    "carpenter",
    "electrician",
    "cleaner",
    "driver",
    "soldier",
    "police officer",
    "firefighter",
    "pharmacist",
    "dentist",
    "midwife",
    "social worker",
    "accountant",
    "chef",
    "pilot",
];
static SO_CTX: &[&str] = &[
    "",
    " in hospital",
    " in community",
    " in industry",
    " abroad",
    " in education",
];
static SPC_ADJ: &[&str] = &["", "obsolete ", "legacy ", "temporary "];
static SPC_SCOPE: &[&str] = &["", "general ", "specific ", "miscellaneous "];
static SPC_KIND: &[&str] = &["", " group", " list"];
static SPC_NOUN: &[&str] = &["grouper", "category", "heading", "collection", "bin"];
static SPC_SUF: &[&str] = &[
    "",
    " A",
    " B",
    " C",
    " for findings",
    " for procedures",
    " for products",
];
static ST_PRE: &[&str] = &["", "adult ", "neonatal "];
static SCALE_NAME: &[&str] = &[
    "Glasgow coma",
    "Apgar",
    "Barthel",
    "Braden",
    "Karnofsky",
    "mini-mental state",
    "Hamilton depression",
    "Beck anxiety",
    "Wells",
    "CHA2DS2-VASc",
    "Child-Pugh",
    "MELD",
    "TNM",
    "FIGO",
    "Gleason",
    "Breslow",
    "Clark",
    "Ann Arbor",
    "Dukes",
    "Norton",
    "Waterlow",
    "Edmonton frailty",
    "Epworth sleepiness",
    "Oswestry disability",
    "Ranson",
    "APACHE II",
    "SOFA",
    "visual analog pain",
    "numeric rating pain",
    "Berg balance",
];
static SCALE_KIND: &[&str] = &[
    " score",
    " scale",
    " index",
    " staging system",
    " classification",
    " grade",
];
static SCALE_SUF: &[&str] = &[
    "",
    " version 2",
    " revised",
    " modified",
    " short form",
    " pediatric version",
];

// ---------------------------------------------------------------------------
// Patterns.

static DISORDER: Pattern = Pattern {
    forms: &[
        &[
            S(0, ADJ_DIS),
            S(1, MORPH),
            L(" of "),
            S(2, SITE_N),
            S(3, CAUSE),
        ],
        &[
            S(0, ADJ_DIS),
            S(2, SITE_A),
            L(" "),
            S(1, MORPH),
            S(3, CAUSE),
        ],
        &[
            S(0, ADJ_DIS),
            S(1, MORPH),
            L(" of the "),
            S(2, SITE_N),
            S(3, CAUSE),
        ],
    ],
};
static EPONYM_DISORDER: Pattern = Pattern {
    forms: &[
        &[
            S(0, EPO_ADJ),
            S(1, EPONYM),
            S(2, EPO_KIND),
            S(3, EPO_SUFFIX),
        ],
        &[
            S(0, EPO_ADJ),
            S(1, EPONYM_POSS),
            S(2, EPO_KIND),
            S(3, EPO_SUFFIX),
        ],
    ],
};
static FINDING: Pattern = Pattern {
    forms: &[
        &[
            S(0, SEVERITY),
            S(1, SYMPTOM),
            L(" of "),
            S(2, SITE_N),
            S(3, FIND_TIME),
        ],
        &[
            S(0, SEVERITY),
            S(2, SITE_A),
            L(" "),
            S(1, SYMPTOM),
            S(3, FIND_TIME),
        ],
        &[
            L("complaint of "),
            S(0, SEVERITY),
            S(1, SYMPTOM),
            L(" of "),
            S(2, SITE_N),
            S(3, FIND_TIME),
        ],
    ],
};
static MEASURE_FINDING: Pattern = Pattern {
    forms: &[
        &[
            S(0, DIRECTION),
            S(1, MEASURE),
            S(2, MEASURE_CONTEXT),
            S(3, MEASURE_TIMING),
        ],
        &[
            S(1, MEASURE),
            L(" "),
            S(0, DIRECTION_WORD),
            S(2, MEASURE_CONTEXT),
            S(3, MEASURE_TIMING),
        ],
    ],
};
static PROCEDURE_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, APPROACH),
            S(1, ACTION_N),
            L(" of "),
            S(2, SITE_N),
            S(3, PROC_SUFFIX),
        ],
        &[
            S(0, APPROACH),
            S(1, ACTION_SHORT),
            L(" of "),
            S(2, SITE_N),
            S(3, PROC_SUFFIX),
        ],
        &[
            S(0, APPROACH),
            S(2, SITE_A),
            L(" "),
            S(1, ACTION_N),
            S(3, PROC_SUFFIX),
        ],
    ],
};
static BODY: Pattern = Pattern {
    forms: &[
        &[
            S(0, BS_PRE),
            S(1, BS_DEPTH),
            S(2, BS_PART),
            S(3, POSITION),
            S(4, SITE_N),
        ],
        &[
            S(1, BS_DEPTH),
            S(3, POSITION),
            S(4, SITE_A),
            L(" "),
            S(2, BS_PART_NOUN),
        ],
        &[S(1, BS_DEPTH), S(2, BS_PART), S(3, POSITION), S(4, SITE_N)],
    ],
};
static MORPHOLOGY: Pattern = Pattern {
    forms: &[
        &[
            S(0, ADJ_DIS),
            S(1, MORPH_ADJ),
            S(2, MORPH),
            S(3, MORPH_SUFFIX),
        ],
        &[
            S(0, ADJ_DIS),
            S(1, MORPH_ADJ),
            S(2, MORPH),
            L(" morphology"),
            S(3, MORPH_SUFFIX),
        ],
    ],
};
static ORGANISM_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, ORG_PRE),
            S(1, GENUS),
            L(" "),
            S(2, SPECIES),
            S(3, STRAIN),
        ],
        &[
            S(0, ORG_PRE),
            S(1, GENUS_ABBR),
            L(" "),
            S(2, SPECIES),
            S(3, STRAIN),
        ],
    ],
};
static DRUG_SUBSTANCE: Pattern = Pattern {
    forms: &[
        &[S(0, SUB_PRE), S(1, SUB_CORE), S(2, SUB_SUF), S(3, SALT)],
        &[
            S(0, SUB_PRE),
            S(1, SUB_CORE),
            S(2, SUB_SUF),
            S(3, SALT),
            L(" substance"),
        ],
    ],
};
static BIOLOGIC_SUBSTANCE: Pattern = Pattern {
    forms: &[
        &[S(0, BIO_PRE), S(1, BIO), S(2, BIO_SUF), S(3, BIO_FORM)],
        &[
            S(0, BIO_PRE),
            S(1, BIO),
            S(2, BIO_SUF),
            S(3, BIO_FORM),
            L(" substance"),
        ],
    ],
};
static PRODUCT_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, SUB_PRE),
            S(1, SUB_CORE),
            S(2, SUB_SUF),
            L(" "),
            S(3, STRENGTH),
            S(4, DOSE_FORM),
        ],
        &[
            S(0, SUB_PRE),
            S(1, SUB_CORE),
            S(2, SUB_SUF),
            L(" "),
            S(3, STRENGTH),
            S(4, DOSE_SHORT),
        ],
        &[
            L("product containing "),
            S(0, SUB_PRE),
            S(1, SUB_CORE),
            S(2, SUB_SUF),
            L(" "),
            S(3, STRENGTH),
            S(4, DOSE_FORM),
        ],
    ],
};
static QUALIFIER_P: Pattern = Pattern {
    forms: &[&[S(0, Q_ADJ), S(1, Q_NOUN), S(2, Q_NUM), S(3, Q_SUF)]],
};
static ACTION_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, ACT_ADJ),
            S(1, ACT_EXT),
            S(2, ACTION_N),
            S(3, ACT_TECH),
            L(" - action"),
        ],
        &[S(0, ACT_ADJ), S(1, ACT_EXT), S(2, ACTION_N), S(3, ACT_TECH)],
    ],
};
static DOSE_FORM_P: Pattern = Pattern {
    forms: &[
        &[S(0, DF_MOD), S(1, DOSE_FORM), S(2, DF_PACK), S(3, DF_SUF)],
        &[S(0, DF_MOD), S(1, DOSE_SHORT), S(2, DF_PACK), S(3, DF_SUF)],
    ],
};
static OBSERVABLE_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, OBS_PROP),
            L(" of "),
            S(1, OBS_COMP),
            L(" in "),
            S(2, OBS_SYS),
            S(3, OBS_SUF),
        ],
        &[
            S(2, OBS_SYS),
            L(" "),
            S(1, OBS_COMP),
            L(" "),
            S(0, OBS_PROP),
            S(3, OBS_SUF),
        ],
    ],
};
static SITUATION_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, SIT_PRE),
            S(1, ADJ_DIS),
            S(2, MORPH),
            L(" of "),
            S(3, SITE_N),
        ],
        &[
            S(0, SIT_PRE),
            S(1, ADJ_DIS),
            S(3, SITE_A),
            L(" "),
            S(2, MORPH),
        ],
    ],
};
static EVENT_P: Pattern = Pattern {
    forms: &[
        &[S(0, EV_ADJ), S(1, EV_NOUN), S(2, EV_WHO), S(3, EV_CTX)],
        &[S(0, EV_ADJ), S(1, EV_NOUN), S(3, EV_CTX), S(2, EV_WHO)],
    ],
};
static OBJECT_P: Pattern = Pattern {
    forms: &[
        &[S(0, PO_SIZE), S(1, MATERIAL), S(2, DEVICE), S(3, PO_SUF)],
        &[
            S(0, PO_SIZE),
            S(1, MATERIAL),
            S(2, DEVICE),
            L(" device"),
            S(3, PO_SUF),
        ],
    ],
};
static SPECIMEN_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, SP_TYPE),
            L(" specimen from "),
            S(1, SIDE),
            S(2, SITE_N),
            S(3, SP_METHOD),
        ],
        &[
            S(1, SIDE),
            S(2, SITE_A),
            L(" "),
            S(0, SP_TYPE),
            L(" specimen"),
            S(3, SP_METHOD),
        ],
    ],
};
static ENVIRONMENT_P: Pattern = Pattern {
    forms: &[&[
        S(0, ENV_REGION),
        S(1, ENV_ADJ),
        S(2, ENV_NOUN),
        S(3, ENV_SUF),
    ]],
};
static FORCE_P: Pattern = Pattern {
    forms: &[&[S(0, PF_CTX), S(1, PF_ADJ), S(2, PF_NOUN), S(3, PF_SUF)]],
};
static RECORD_P: Pattern = Pattern {
    forms: &[&[S(0, RA_STATE), S(1, RA_ADJ), S(2, RA_NOUN), S(3, RA_SUF)]],
};
static SOCIAL_P: Pattern = Pattern {
    forms: &[&[S(0, SO_STATUS), S(1, SO_ADJ), S(2, SO_OCC), S(3, SO_CTX)]],
};
static SPECIAL_P: Pattern = Pattern {
    forms: &[&[
        S(0, SPC_ADJ),
        S(3, SPC_SCOPE),
        S(1, SPC_NOUN),
        S(4, SPC_KIND),
        S(2, SPC_SUF),
    ]],
};
static SCALE_P: Pattern = Pattern {
    forms: &[
        &[
            S(0, ST_PRE),
            S(1, SCALE_NAME),
            S(2, SCALE_KIND),
            S(3, SCALE_SUF),
        ],
        &[S(1, SCALE_NAME), S(2, SCALE_KIND), S(3, SCALE_SUF)],
    ],
};

// ---------------------------------------------------------------------------
// Term construction.

/// A term with its case significance concept id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Term {
    pub(crate) text: String,
    pub(crate) case: u64,
}

#[derive(Debug)]
struct PatternInfo {
    radices: Vec<u64>,
    size: u64,
    mult: u64,
    offset: u64,
    start: u64,
    count: u64,
}

/// Precomputed slot spaces and scramblers for every branch's patterns.
#[derive(Debug)]
pub(crate) struct Vocab {
    infos: Vec<Vec<PatternInfo>>,
    residues: Vec<u64>,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Vocab {
    pub(crate) fn new() -> Vocab {
        let mut infos = Vec::with_capacity(BRANCH_COUNT);
        let mut residues = Vec::with_capacity(BRANCH_COUNT);
        for (bi, def) in BRANCHES.iter().enumerate() {
            let mut list = Vec::new();
            let mut start = 0u64;
            for (pi, (pattern, count)) in def.patterns.iter().enumerate() {
                let mut radices: Vec<u64> = Vec::new();
                for form in pattern.forms {
                    for part in *form {
                        if let S(slot, words) = part {
                            let slot = usize::from(*slot);
                            if radices.len() <= slot {
                                radices.resize(slot + 1, 1);
                            }
                            radices[slot] = radices[slot].max(words.len() as u64);
                        }
                    }
                }
                let size: u64 = radices.iter().product::<u64>().max(1);
                // An odd multiplier near size/φ, made coprime with the size,
                // spreads neighbouring ordinals over the whole slot space.
                let mut mult = ((size as f64 * 0.618_033_988_75) as u64).max(1) | 1;
                while gcd(mult, size) != 1 {
                    mult += 1;
                }
                let offset = (bi as u64 * 7919 + pi as u64 * 104_729) % size;
                list.push(PatternInfo {
                    radices,
                    size,
                    mult,
                    offset,
                    start,
                    count: u64::from(*count),
                });
                start += u64::from(*count);
            }
            infos.push(list);
            residues.push(start.max(1));
        }
        Vocab { infos, residues }
    }

    /// The distinct terms (preferred term first) of the `ordinal`-th concept
    /// of branch `b`.
    pub(crate) fn terms(&self, b: Branch, ordinal: u32, out: &mut Vec<Term>) {
        out.clear();
        let def = b.def();
        let infos = &self.infos[b as usize];
        let k = u64::from(ordinal);
        let total = self.residues[b as usize];
        let (r, q) = (k % total, k / total);
        let Some((pi, info)) = infos
            .iter()
            .enumerate()
            .find(|(_, info)| r >= info.start && r < info.start + info.count)
        else {
            return;
        };
        let pattern = def.patterns[pi].0;
        let sub = q * info.count + (r - info.start);
        let wrap = sub / info.size;
        let mut s = ((u128::from(sub % info.size) * u128::from(info.mult)
            + u128::from(info.offset))
            % u128::from(info.size)) as u64;
        let mut digits = [0usize; 8];
        for (slot, radix) in info.radices.iter().enumerate() {
            digits[slot] = (s % radix) as usize;
            s /= radix;
        }
        for form in pattern.forms {
            let mut raw = String::with_capacity(64);
            for part in *form {
                match part {
                    L(text) => raw.push_str(text),
                    S(slot, words) => {
                        if let Some(w) = words.get(digits[usize::from(*slot)]) {
                            raw.push_str(w);
                        }
                    }
                }
            }
            if wrap > 0 {
                raw.push_str(", variant ");
                raw.push_str(&(wrap + 1).to_string());
            }
            let term = finish_term(raw);
            if !out.iter().any(|t| t.text == term.text) {
                out.push(term);
            }
        }
    }
}

/// Computes the case significance of a raw (lower-case unless proper)
/// term and capitalises its first letter where that is allowed.
pub(crate) fn finish_term(raw: String) -> Term {
    let case = case_significance(&raw);
    let text = if case == CASE_SENSITIVE {
        raw
    } else {
        capitalize(&raw)
    };
    Term { text, case }
}

/// Entire-term sensitive when the first word carries meaningful capitals
/// ("Ménière disease", "pH of blood", "CT of liver"); initial-character
/// insensitive when a later word does ("Acute Ménière disease"); otherwise
/// insensitive.
pub(crate) fn case_significance(raw: &str) -> u64 {
    let mut words = raw.split(' ');
    let first = words.next().unwrap_or("");
    if first.chars().any(char::is_uppercase) {
        CASE_SENSITIVE
    } else if words.any(|w| w.chars().any(char::is_uppercase)) {
        INITIAL_INSENSITIVE
    } else {
        CASE_INSENSITIVE
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => {
            let mut out = String::with_capacity(s.len() + 2);
            out.extend(c.to_uppercase());
            out.push_str(chars.as_str());
            out
        }
        None => String::new(),
    }
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => {
            let mut out = String::with_capacity(s.len() + 2);
            out.extend(c.to_lowercase());
            out.push_str(chars.as_str());
            out
        }
        None => String::new(),
    }
}

/// A text definition for a concept with preferred term `pt`.
pub(crate) fn definition(b: Branch, pt: &Term) -> String {
    let tag = b.def().tag;
    let article = if tag.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "An"
    } else {
        "A"
    };
    let body = if pt.case == CASE_SENSITIVE {
        pt.text.clone()
    } else {
        lowercase_first(&pt.text)
    };
    format!("{article} {tag} characterized by {body}, defined for synthetic test data.")
}

/// US → GB spelling stems, matched at the start of a word.
static DIALECT: &[(&str, &str)] = &[
    ("esophag", "oesophag"),
    ("anemi", "anaemi"),
    ("hemoglobin", "haemoglobin"),
    ("leukemi", "leukaemi"),
    ("fetal", "foetal"),
    ("orthopedic", "orthopaedic"),
    ("sulfate", "sulphate"),
    ("color", "colour"),
    ("diarrhea", "diarrhoea"),
    ("cecum", "caecum"),
    ("cecal", "caecal"),
    ("estrogen", "oestrogen"),
    ("gynecolog", "gynaecolog"),
    ("catheterization", "catheterisation"),
    ("stabilization", "stabilisation"),
    ("fiber", "fibre"),
    ("ampule", "ampoule"),
    ("titer", "titre"),
    ("analog", "analogue"),
];

/// The GB spelling of `term`, if it differs from the (US) input.
pub(crate) fn gb_spelling(term: &str) -> Option<String> {
    let bytes = term.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    let mut changed = false;
    'scan: while i < bytes.len() {
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphabetic() || bytes[i - 1] >= 0x80);
        if word_start && bytes[i].is_ascii_alphabetic() {
            for (us, gb) in DIALECT {
                let u = us.as_bytes();
                if bytes.len() - i >= u.len()
                    && bytes[i].eq_ignore_ascii_case(&u[0])
                    && bytes[i + 1..i + u.len()] == u[1..]
                {
                    // Stems are whole words or prefixes of longer words; a
                    // stem must not continue into "-ical" style words that
                    // are spelled alike (none in our vocabulary), so accept.
                    out.push_str(&term[last..i]);
                    if bytes[i].is_ascii_uppercase() {
                        out.push_str(&capitalize(gb));
                    } else {
                        out.push_str(gb);
                    }
                    i += u.len();
                    last = i;
                    changed = true;
                    continue 'scan;
                }
            }
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&term[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_slots_have_equal_lengths() {
        for def in &BRANCHES {
            for (pattern, _) in def.patterns {
                let mut lens: Vec<Option<usize>> = vec![None; 8];
                for form in pattern.forms {
                    for part in *form {
                        if let S(slot, words) = part {
                            let l = &mut lens[usize::from(*slot)];
                            assert!(l.is_none() || *l == Some(words.len()), "{}", def.tag);
                            *l = Some(words.len());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn terms_are_unique_and_clean() {
        let v = Vocab::new();
        let mut out = Vec::new();
        for branch in Branch::ALL {
            let mut seen = std::collections::HashSet::new();
            for k in 0..20_000u32 {
                v.terms(branch, k, &mut out);
                assert!(!out.is_empty());
                for t in &out {
                    assert!(!t.text.contains("  "), "{:?}", t.text);
                    assert_eq!(t.text.trim(), t.text, "{:?}", t.text);
                    assert!(!t.text.contains(['\t', '\r', '\n']));
                }
                assert!(
                    seen.insert(out[0].text.clone()),
                    "{branch:?} {k} {:?}",
                    out[0].text
                );
            }
        }
    }

    #[test]
    fn case_and_dialect() {
        assert_eq!(case_significance("Ménière disease"), CASE_SENSITIVE);
        assert_eq!(
            case_significance("acute Ménière disease"),
            INITIAL_INSENSITIVE
        );
        assert_eq!(case_significance("ulcer of stomach"), CASE_INSENSITIVE);
        assert_eq!(case_significance("pH of blood"), CASE_SENSITIVE);
        assert_eq!(finish_term("ulcer".into()).text, "Ulcer");
        assert_eq!(
            gb_spelling("Esophageal ulcer with color change").as_deref(),
            Some("Oesophageal ulcer with colour change")
        );
        assert_eq!(gb_spelling("Lymphocolor of leg"), None);
        assert_eq!(gb_spelling("Chemotherapy"), None);
        assert_eq!(gb_spelling("Ménière disease"), None);
    }
}
