//! `ValueSet/$batch-validate-code`: each `validation` parameter is a
//! Parameters resource of one `$validate-code`, answered with the
//! request's other parameters (`url`, `valueSet`, `tx-resource`s...)
//! added after its own, those it does not give itself; each answer
//! (Parameters, or the OperationOutcome of an error) comes back as a
//! `validation` parameter, in order.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::Error;
use crate::external::ResourceSource;
use crate::parameters::{Body, Param, Parameters, Resource, Scalar};
use crate::request::Request;

fn name(p: &Value) -> Option<&str> {
    p.get("name").and_then(Value::as_str)
}

/// A validation without a code, in the tooling's words.
const NO_CODE: &str = "Unable to find code to validate (looked for coding | codeableConcept | code+system | code+inferSystem in parameters";

/// The `status` of an inactive concept, which a batch answer states (a
/// single `$validate-code` may leave it out).
fn add_status(req: &Request, answer: &mut Parameters<'static>) {
    let text = |n: &str| answer.get(n).and_then(Param::text_value);
    let inactive = answer
        .get("inactive")
        .is_some_and(|p| p.body == Body::Value("valueBoolean".into(), Scalar::Bool(true)));
    if !inactive || answer.get("status").is_some() {
        return;
    }
    let (Some(system), Some(code)) = (text("system"), text("code")) else {
        return;
    };
    let Ok(cs) = req.resolver.code_system(system, text("version")) else {
        return;
    };
    if let Some(status) = cs.locate(code).and_then(|l| cs.status(l.id).status) {
        answer.0.push(Param::text("status", "valueCode", status));
    }
}

/// A batch reports an error in the validation it ends as a plain
/// OperationOutcome, without the tooling's issue-type coding.
fn plain_outcome(mut outcome: Value) -> Value {
    for issue in outcome
        .get_mut("issue")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(details) = issue.get_mut("details").and_then(Value::as_object_mut) {
            details.remove("coding");
        }
    }
    outcome
}

/// Answers a batch; `setup` prepares each validation's [`Request`]
/// (language, limits, packages) as the caller would a single one. The
/// batch's own resolver (its `tx-resource`s, parsed once when the batch
/// was read, and whatever the caller put behind them) stands behind each
/// validation's own resources.
pub fn batch_validate(
    batch: Request,
    setup: impl Fn(&mut Request),
) -> Result<Parameters<'static>, Error> {
    let (parameters, resolver) = batch.into_parts();
    let params = parameters
        .get("parameter")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let shared: Vec<&Value> = params
        .iter()
        .filter(|p| !matches!(name(p), Some("validation" | "tx-resource")))
        .collect();
    let shared_resources = Arc::new(resolver) as Arc<dyn ResourceSource>;
    let mut out = Vec::new();
    for v in params.iter().filter(|p| name(p) == Some("validation")) {
        let own = v
            .get("resource")
            .and_then(|r| r.get("parameter"))
            .and_then(Value::as_array)
            .ok_or_else(|| {
                Error::Invalid("A 'validation' parameter must hold a Parameters resource".into())
            })?;
        // The validation's own parameters win: a shared one it gives
        // itself is not added (so each parameter has one value).
        let given = |p: &&Value| own.iter().any(|o| name(o) == name(p));
        let list: Vec<Value> = own
            .iter()
            .chain(shared.iter().copied().filter(|p| !given(p)))
            .cloned()
            .collect();
        let has_code = list
            .iter()
            .any(|p| matches!(name(p), Some("coding" | "codeableConcept" | "code")));
        // Read as strictly as any request: a validation whose parameters
        // do not read is answered by its own OperationOutcome.
        let mut req = match Request::from_parameters(
            json!({"resourceType": "Parameters", "parameter": list}),
        ) {
            Ok(r) => r,
            Err(e) => {
                out.push(Param {
                    name: "validation".into(),
                    body: Body::Resource(Resource::Json(plain_outcome(e.outcome()))),
                });
                continue;
            }
        };
        setup(&mut req);
        req.resolver
            .set_external(Some(Arc::clone(&shared_resources)));
        // The request controls how many validations there are.
        req.check()?;
        let result = if has_code {
            crate::validate::validate_code(&req, true)
        } else {
            Err(Error::Invalid(NO_CODE.into()))
        };
        let answer = match result {
            Ok(mut answer) => {
                add_status(&req, &mut answer);
                Resource::Parameters(answer)
            }
            Err(e) => Resource::Json(plain_outcome(e.outcome())),
        };
        out.push(Param {
            name: "validation".into(),
            body: Body::Resource(answer),
        });
    }
    Ok(Parameters(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each validation's `result`, in order.
    fn results(batch: &Value) -> Vec<bool> {
        let out = batch_validate(Request::new(batch.clone()), |_| {})
            .unwrap()
            .to_value();
        out["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                v["resource"]["parameter"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["name"] == "result")
                    .unwrap()["valueBoolean"]
                    .as_bool()
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn each_validation_is_answered_with_the_shared_parameters() {
        let p = json!({"resourceType": "Parameters", "parameter": [
            {"name": "tx-resource", "resource": {"resourceType": "CodeSystem", "url": "http://cs",
                "version": "1", "status": "active", "content": "complete",
                "concept": [{"code": "a", "display": "A"}]}},
            {"name": "tx-resource", "resource": {"resourceType": "ValueSet", "url": "http://vs",
                "status": "active", "compose": {"include": [{"system": "http://cs"}]}}},
            {"name": "url", "valueUri": "http://vs"},
            {"name": "validation", "resource": {"resourceType": "Parameters", "parameter": [
                {"name": "coding", "valueCoding": {"system": "http://cs", "code": "a"}}]}},
            {"name": "validation", "resource": {"resourceType": "Parameters", "parameter": [
                {"name": "coding", "valueCoding": {"system": "http://cs", "code": "zz"}}]}},
        ]});
        assert_eq!(results(&p), [true, false]);
    }

    #[test]
    fn a_validations_own_resources_win_over_the_shared_ones() {
        let cs = |codes: &[&str]| {
            let concepts: Vec<Value> = codes.iter().map(|c| json!({"code": c})).collect();
            json!({"name": "tx-resource", "resource": {"resourceType": "CodeSystem",
                "url": "http://cs", "version": "1", "content": "complete", "concept": concepts}})
        };
        let validation = |own: Vec<Value>| {
            let mut list = own;
            list.push(
                json!({"name": "coding", "valueCoding": {"system": "http://cs", "code": "b"}}),
            );
            json!({"name": "validation", "resource": {"resourceType": "Parameters", "parameter": list}})
        };
        let p = json!({"resourceType": "Parameters", "parameter": [
            cs(&["a"]),
            {"name": "tx-resource", "resource": {"resourceType": "ValueSet", "url": "http://vs",
                "compose": {"include": [{"system": "http://cs"}]}}},
            {"name": "url", "valueUri": "http://vs"},
            validation(vec![]),
            validation(vec![cs(&["a", "b"])]),
        ]});
        assert_eq!(results(&p), [false, true]);
    }
}
