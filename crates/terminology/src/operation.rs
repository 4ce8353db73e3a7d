//! The one entry to every FHIR terminology operation: the transport names
//! the [`Operation`] and hands over the [`Request`]; [`plan`] says where
//! the work should run and [`answer`] answers it.
//!
//! Some code systems have semantics the generic engine has not — SNOMED
//! CT's post-coordinated expressions, its editions and ECL — and answer
//! whole operations about themselves: a [`ResourceSource`] offers them as
//! [`NativeOperations`], which [`plan`] asks first. Whatever answers, the
//! transport sees one request type, one answer type and one error type,
//! and never decides what a request means.

use std::sync::Arc;

use serde_json::Value;

use crate::error::Error;
use crate::external::ResourceSource;
use crate::parameters::Parameters;
use crate::request::Request;

/// The operations of the FHIR terminology service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `CodeSystem/$lookup`.
    Lookup,
    /// `CodeSystem/$subsumes`.
    Subsumes,
    /// `CodeSystem/$validate-code`.
    CsValidate,
    /// `ValueSet/$validate-code`.
    VsValidate,
    /// `ValueSet/$expand`.
    Expand,
    /// `ConceptMap/$translate`.
    Translate,
    /// `ValueSet/$batch-validate-code`.
    BatchValidate,
    /// `ValueSet/$compare`: how two value sets' codes relate.
    Compare,
}

/// How costly an operation is, which says where the transport runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// A few lookups in a store: run it where the request arrived; moving
    /// it to another thread costs more than it does.
    Cheap,
    /// Expansions, ECL, text search, parsing and indexing the request's
    /// resources: run it where a long one holds up nothing cheap, at a
    /// bounded concurrency.
    Heavy,
}

/// What an operation answers: a Parameters resource from the one writer
/// ([`crate::parameters`]), another resource as JSON (an expanded
/// ValueSet), or either already written as JSON text (an answer that
/// borrowed its strings from a store, written before the borrow ends).
#[derive(Debug)]
pub enum Answer {
    Parameters(Parameters<'static>),
    Resource(Value),
    Text(String),
}

/// The FHIR version an answer is shaped for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fhir {
    R4,
    R5,
}

/// Operations a code system answers whole, because it has semantics the
/// generic engine lacks (SNOMED CT: post-coordinated expressions,
/// editions named by URI, ECL). The generic engine still answers what
/// such a code system does not claim — value sets that mix it with
/// others, for one — through its [`CodeSystemProvider`].
///
/// [`CodeSystemProvider`]: crate::CodeSystemProvider
pub trait NativeOperations: Send + Sync + std::fmt::Debug {
    /// Whether this answers `op` for `request`, and at what cost; `None`
    /// leaves it to the generic engine.
    fn claims(&self, op: Operation, request: &Request) -> Option<Cost>;
    /// Answers a request it claimed.
    fn answer(&self, op: Operation, request: &Request, fhir: Fhir) -> Result<Answer, Error>;
}

/// Who answers a request, and at what cost: made by [`plan`], used by
/// [`answer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub op: Operation,
    pub cost: Cost,
    native: bool,
}

/// Decides who answers `request`: the source's native operations if they
/// claim it, else the generic engine. The generic engine's work is
/// planned by what it is: a `$lookup`, `$subsumes` or
/// `CodeSystem/$validate-code` of one code that sends no resources is a
/// few lookups in one code system ([`Cost::Cheap`]); anything that walks
/// value sets, expands, or parses and indexes the request's resources is
/// heavy.
pub fn plan(op: Operation, request: &Request, source: &dyn ResourceSource) -> Plan {
    match source.native().and_then(|n| n.claims(op, request)) {
        Some(cost) => Plan {
            op,
            cost,
            native: true,
        },
        None => Plan {
            op,
            cost: generic_cost(op, request),
            native: false,
        },
    }
}

/// What the generic engine's answer to `request` costs: see [`plan`].
fn generic_cost(op: Operation, request: &Request) -> Cost {
    let one_code = matches!(
        op,
        Operation::Lookup | Operation::Subsumes | Operation::CsValidate
    );
    let sends_resources = request
        .params
        .0
        .iter()
        .any(|(_, v)| matches!(v, crate::params::ParamValue::Resource(_)));
    // Values given, a CodeableConcept's codings each: a handful for one
    // code; more is not a lookup of one code.
    let values = request
        .params
        .0
        .iter()
        .map(|(_, v)| match v {
            crate::params::ParamValue::CodeableConcept(c) => c.len(),
            _ => 1,
        })
        .sum::<usize>();
    if one_code && !sends_resources && values <= 16 {
        Cost::Cheap
    } else {
        Cost::Heavy
    }
}

/// Answers `request` as `plan` says, with `source` behind the request's
/// own resources.
pub fn answer(
    plan: Plan,
    mut request: Request,
    source: Arc<dyn ResourceSource>,
    fhir: Fhir,
) -> Result<Answer, Error> {
    request.check()?;
    crate::code::check_request(plan.op, &request)?;
    if plan.native
        && let Some(native) = source.native()
    {
        return native.answer(plan.op, &request, fhir);
    }
    request.resolver.set_external(Some(Arc::clone(&source)));
    let r5 = fhir == Fhir::R5;
    Ok(match plan.op {
        Operation::Lookup => Answer::Parameters(crate::lookup::lookup(&request)?),
        Operation::CsValidate => {
            Answer::Parameters(crate::validate::validate_code(&request, false)?)
        }
        Operation::VsValidate => {
            Answer::Parameters(crate::validate::validate_code(&request, true)?)
        }
        Operation::Translate => Answer::Parameters(crate::translate::translate(&request, r5)?),
        Operation::Subsumes => Answer::Parameters(crate::subsumes::subsumes(&request)?),
        Operation::Compare => Answer::Parameters(crate::compare::compare(&request)?),
        Operation::Expand => {
            let mut vs = crate::expand::expand(
                &request,
                &crate::expand::identifier(),
                &crate::expand::timestamp(),
            )?;
            if !r5 {
                crate::expand::to_r4(&mut vs);
            }
            Answer::Resource(vs)
        }
        Operation::BatchValidate => {
            // Each validation is a request of its own, made like this one.
            let (language, max, deadline, watch) = (
                request.accept_language.clone(),
                request.max_expansion,
                request.deadline,
                request.watch.clone(),
            );
            let setup = |req: &mut Request| {
                req.resolver.set_external(Some(Arc::clone(&source)));
                req.accept_language.clone_from(&language);
                req.max_expansion = max;
                req.deadline = deadline;
                req.watch.clone_from(&watch);
            };
            Answer::Parameters(crate::batch::batch_validate(request, setup)?)
        }
    })
}
